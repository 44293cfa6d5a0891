import { describe, expect, it } from 'vitest';
import { RPC_RDMA_FIELDS } from '../../dissectors/rpc-rdma/fields.js';
import { indexFields } from '../../src/vocabulary/fields.js';
import { HAVE_TSHARK, wiresharkFields } from '../helpers/tools.js';

/** Fields Wireshark does not have: declared under rpcordma. by us. */
const OURS = new Set([
  'rpcordma.read_chunk',
  'rpcordma.write_chunk',
  'rpcordma.reply_chunk',
  'rpcordma.segment',
  'rpcordma.rpc_offset',
  'rpcordma.credits_outstanding',
  'rpcordma.inline_limit',
  'rpcordma.latency_us',
  'rpcordma.read_bytes',
  'rpcordma.written_bytes',
  'rpcordma.invalidated_stag',
  'rpcordma.cm',
  'rpcordma.cm.magic',
  'rpcordma.cm.version',
  'rpcordma.cm.remote_invalidate',
  'rpcordma.cm.send_size',
  'rpcordma.cm.recv_size',
]);

const WS_TYPE: Record<string, string[]> = {
  protocol: ['FT_PROTOCOL'],
  uint: ['FT_UINT32', 'FT_FRAMENUM'],
  uint64: ['FT_UINT64'],
  string: ['FT_STRING'],
  bool: ['FT_BOOLEAN'],
  bytes: ['FT_BYTES'],
};

describe('field table', () => {
  it('declares each field once', () => {
    expect(() => indexFields(RPC_RDMA_FIELDS)).not.toThrow();
  });

  // Read when the test runs, not when the file is collected: by then another file may have left it.
  it.skipIf(!HAVE_TSHARK)("uses Wireshark's names and types where Wireshark has the field (tshark -G fields)", () => {
    const table = new Map<string, string>();
    const have = wiresharkFields();
    expect(have, 'tshark -G fields').not.toBeNull();
    for (const line of have!.split('\n')) {
      const c = line.split('\t');
      if (c[0] === 'F') table.set(c[2]!, c[3]!);
      else if (c[0] === 'P') table.set(c[2]!, 'FT_PROTOCOL');
    }
    for (const f of RPC_RDMA_FIELDS) {
      if (OURS.has(f.abbrev)) {
        expect(table.has(f.abbrev), `${f.abbrev} is ours, yet Wireshark has it`).toBe(false);
        continue;
      }
      expect(table.get(f.abbrev), f.abbrev).toBeDefined();
      expect(WS_TYPE[f.type], f.abbrev).toContain(table.get(f.abbrev));
    }
  });
});
