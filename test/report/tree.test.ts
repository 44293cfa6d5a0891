/** The MPA detail trees (dissectors/mpa/tree.ts) and their tshark-style rendering (-V). */
import { describe, expect, it } from 'vitest';
import type { TreeNode } from '../../src/vocabulary/fields.js';
import type { FpduRecord } from '../../dissectors/mpa/mpa-flow.js';
import type { StartupRecord } from '../../dissectors/mpa/startup.js';
import {
  fpduLayout,
  mpaFpduTree,
  mpaStartupTree,
  OCTET_CRC,
  OCTET_LENGTH,
  OCTET_MARKER,
  OCTET_PAD,
  OCTET_ULPDU,
} from '../../dissectors/mpa/tree.js';
import { MPA_FIELDS } from '../../dissectors/mpa/fields.js';
import { bitPattern, formatValue, nodeText, treeLines } from '../../src/report/tree-text.js';

/**
 * An FPDU with a leading marker, ULPDU_Length 505 (one PAD octet) and a marker between PAD and
 * CRC: the layout every RNIC gets wrong once. Offsets are stream offsets, SeqStart at 0.
 */
function fpdu(over: Partial<FpduRecord> = {}): FpduRecord {
  return {
    kind: 'fpdu',
    flow: 1,
    dir: 0,
    from: '10.0.0.1:40001',
    to: '10.0.0.2:4420',
    start: 0,
    lenOffset: 4,
    seq: 1004,
    ulpduLength: 505,
    pad: 1,
    wireSize: 520,
    // CRC32c values; wire octets 4d 3c 2b 1a and 4c 3c 2b 1a (RFC 5044 §4.4 order).
    crcWire: 0x1a2b3c4d,
    crcComputed: 0x1a2b3c4c,
    crcStatus: 'bad',
    markers: [
      { offset: 0, seq: 1000, reserved: 0, fpduptr: 0, expected: 0 },
      { offset: 512, seq: 1512, reserved: 0, fpduptr: 516, expected: 508 },
    ],
    padNonZero: false,
    frames: [7, 8],
    head: new Uint8Array(0),
    afterError: false,
    upper: null,
    ...over,
  };
}

function find(nodes: readonly TreeNode[], abbrev: string): TreeNode[] {
  const out: TreeNode[] = [];
  const walk = (ns: readonly TreeNode[]): void => {
    for (const n of ns) {
      if (n.field.abbrev === abbrev) out.push(n);
      if (n.children) walk(n.children);
    }
  };
  walk(nodes);
  return out;
}

describe('fpduLayout', () => {
  it('marks the leading marker, the length, PAD, a marker between PAD and CRC, and the CRC', () => {
    const cls = fpduLayout(fpdu());
    const at = (i: number) => cls[i];
    expect([0, 1, 2, 3].map(at)).toEqual([OCTET_MARKER, OCTET_MARKER, OCTET_MARKER, OCTET_MARKER]);
    expect([4, 5].map(at)).toEqual([OCTET_LENGTH, OCTET_LENGTH]);
    expect([6, 510].map(at)).toEqual([OCTET_ULPDU, OCTET_ULPDU]);
    expect(at(511)).toBe(OCTET_PAD);
    expect([512, 513, 514, 515].map(at)).toEqual([OCTET_MARKER, OCTET_MARKER, OCTET_MARKER, OCTET_MARKER]);
    expect([516, 517, 518, 519].map(at)).toEqual([OCTET_CRC, OCTET_CRC, OCTET_CRC, OCTET_CRC]);
  });
  it('without markers: length first, PAD right before the CRC', () => {
    const cls = fpduLayout(fpdu({ start: 0, lenOffset: 0, ulpduLength: 19, pad: 3, wireSize: 28, markers: [] }));
    const L = OCTET_LENGTH,
      U = OCTET_ULPDU,
      P = OCTET_PAD,
      C = OCTET_CRC;
    expect(Array.from(cls)).toEqual([L, L, ...new Array<number>(19).fill(U), P, P, P, C, C, C, C]);
  });
});

describe('mpaFpduTree', () => {
  const tree = mpaFpduTree(fpdu());
  it('is one iwarp_mpa node with the fields in wire order, then the generated ones', () => {
    expect(tree).toHaveLength(1);
    expect(tree[0]!.field).toBe(MPA_FIELDS.proto);
    const kids = tree[0]!.children!.map((n) => n.field.abbrev);
    expect(kids).toEqual([
      'iwarp_mpa.marker_seq',
      'iwarp_mpa.ulpdulength',
      'iwarp_mpa.pad',
      'iwarp_mpa.marker_seq',
      'iwarp_mpa.crc',
      'iwarp_mpa.seq',
      'iwarp_mpa.markers',
      'iwarp_mpa.crc_check',
      'iwarp_mpa.crc_status',
    ]);
  });
  it('shows each marker with FPDUPTR seen vs expected', () => {
    const ptrs = find(tree, 'iwarp_mpa.marker_fpduptr');
    expect(ptrs.map((n) => n.value)).toEqual([0, 516]);
    expect(find(tree, 'iwarp_mpa.marker_fpduptr_expected').map((n) => n.value)).toEqual([0, 508]);
    expect(ptrs[1]!.display).toBe('516 [expected 508]');
    expect(find(tree, 'iwarp_mpa.marker_seq')[1]!.display).toBe('1512 (FPDU offset 512) [FPDUPTR mismatch]');
  });
  it('shows the CRC seen vs computed and the status, as Wireshark shows them (wire octets read most significant first)', () => {
    expect(find(tree, 'iwarp_mpa.crc')[0]!.display).toBe('0x4d3c2b1a [incorrect, should be 0x4c3c2b1a]');
    expect(find(tree, 'iwarp_mpa.crc')[0]!.value).toBe(0x4d3c2b1a);
    expect(find(tree, 'iwarp_mpa.crc_check')[0]!.value).toBe(0x4c3c2b1a);
    expect(find(tree, 'iwarp_mpa.crc_status')[0]!.value).toBe('bad');
  });
  it('a good CRC shows the same value as received and as computed', () => {
    const t = mpaFpduTree(fpdu({ crcStatus: 'good', crcWire: 0xb3509b33, crcComputed: 0xb3509b33 }));
    // Wire octets 33 9b 50 b3: Wireshark shows 0x339b50b3.
    expect(find(t, 'iwarp_mpa.crc')[0]!.display).toBe('0x339b50b3 [correct]');
    expect(find(t, 'iwarp_mpa.crc')[0]!.value).toBe(0x339b50b3);
    expect(find(t, 'iwarp_mpa.crc_check')[0]!.value).toBe(0x339b50b3);
  });
  it('a CRC sent byte-swapped shows the computed CRC with its octets reversed', () => {
    // CRC32c value 0xb3509b33 is due as octets 33 9b 50 b3 (Wireshark: 0x339b50b3); the sender put
    // it most significant octet first, b3 50 9b 33 (Wireshark: 0xb3509b33).
    const t = mpaFpduTree(fpdu({ crcStatus: 'byte-swapped', crcWire: 0x339b50b3, crcComputed: 0xb3509b33 }));
    expect(find(t, 'iwarp_mpa.crc')[0]!.display).toBe(
      '0xb3509b33 [incorrect, should be 0x339b50b3: sent byte-swapped]',
    );
    expect(find(t, 'iwarp_mpa.crc_check')[0]!.value).toBe(0x339b50b3);
  });
  it('leaves out the computed CRC when CRC is not in use', () => {
    const t = mpaFpduTree(fpdu({ crcStatus: 'unchecked', crcWire: 0 }));
    expect(find(t, 'iwarp_mpa.crc_check')).toEqual([]);
    expect(find(t, 'iwarp_mpa.crc')[0]!.display).toBe('0x00000000 [not checked: CRC not in use]');
  });
  it('renders as tshark -V does', () => {
    expect(treeLines(tree)).toEqual([
      'iWARP Marker Protocol data unit Aligned framing, FPDU, ULPDU length 505',
      '    Marker sequence number: 1000 (FPDU offset 0)',
      '        Reserved: 0x0000',
      '        FPDU back pointer: 0',
      '        [Expected FPDU back pointer: 0]',
      '    ULPDU length: 505',
      '    Padding: 1 octets',
      '    Marker sequence number: 1512 (FPDU offset 512) [FPDUPTR mismatch]',
      '        Reserved: 0x0000',
      '        FPDU back pointer: 516 [expected 508]',
      '        [Expected FPDU back pointer: 508]',
      '    CRC: 0x4d3c2b1a [incorrect, should be 0x4c3c2b1a]',
      '    [FPDU sequence number: 1004]',
      '    [Markers: 2]',
      '    [CRC check: 0x4c3c2b1a]',
      '    [CRC status: bad]',
    ]);
  });
});

describe('mpaStartupTree', () => {
  const rec: StartupRecord = {
    kind: 'request',
    keyOk: true,
    m: true,
    c: false,
    r: false,
    enhanced: true,
    res: 0x8,
    rev: 2,
    pdLength: 4,
    flow: 1,
    dir: 0,
    from: '10.0.0.1:40001',
    to: '10.0.0.2:4420',
    frame: 4,
    frames: [4],
    seq: 1001,
    privateData: Uint8Array.of(0x80, 0x10, 0x40, 0x20),
    pdComplete: true,
    enhancedBlock: { ird: 16, ord: 32, p2p: true, rtr: { send: false, write: false, read: true } },
    vendor: ['reserved flag 0x08: Linux siw GSO_EXP (FPDUs larger than the MSS)'],
  };
  it('shows flags as bits, the RFC 6581 block inside the Private Data, vendor labels', () => {
    expect(treeLines(mpaStartupTree(rec))).toEqual([
      'iWARP Marker Protocol data unit Aligned framing, MPA Request Frame',
      '    ID Req frame: MPA ID Req Frame',
      '    1... .... = Marker flag: True',
      '    .0.. .... = CRC flag: False',
      '    ..0. .... = Connection rejected flag: False',
      '    ...1 .... = Enhanced RDMA connection establishment flag: True',
      '    .... 1000 = Reserved: 0x8',
      '    Revision: 2',
      '    Private data length: 4',
      '    Private data: 80104020',
      '        1... .... .... .... = Peer-to-peer (A): True',
      '        .0.. .... .... .... = Zero-length SEND RTR (B): False',
      '        ..00 0000 0001 0000 = IRD: 16',
      '        0... .... .... .... = Zero-length RDMA WRITE RTR (C): False',
      '        .1.. .... .... .... = Zero-length RDMA READ RTR (D): True',
      '        ..00 0000 0010 0000 = ORD: 32',
      '    [Vendor extension: reserved flag 0x08: Linux siw GSO_EXP (FPDUs larger than the MSS)]',
    ]);
  });
  it('names a damaged key instead of printing it', () => {
    const t = mpaStartupTree({ ...rec, keyOk: false });
    expect(nodeText(find(t, 'iwarp_mpa.key.req')[0]!)).toBe('ID Req frame: [damaged: not "MPA ID Req Frame"]');
  });
});

describe('tree text', () => {
  it('bit patterns for flags and sub-byte fields, shifted or not', () => {
    expect(bitPattern(0x40, 8, true)).toBe('.1.. ....');
    expect(bitPattern(0x3c, 8, 0)).toBe('..00 00..');
    expect(bitPattern(0x3c, 8, 0xf)).toBe('..11 11..');
    expect(bitPattern(0xe000, 16, 0xa000)).toBe('101. .... .... ....'); // stored unshifted
    expect(bitPattern(0xfffffff0, 32, 1)).toBe('0000 0000 0000 0000 0000 0000 0001 ....');
  });
  it('values by type, base and names', () => {
    const f = (type: 'uint' | 'uint64' | 'bool' | 'bytes', extra = {}) => ({
      abbrev: 'x',
      name: 'X',
      type,
      blurb: '',
      ...extra,
    });
    expect(formatValue(f('uint', { base: 'hex' }), 10, 4)).toBe('0x000a');
    expect(formatValue(f('uint', { strings: { 3: 'Send' } }), 3)).toBe('Send (3)');
    expect(formatValue(f('uint64', { base: 'hex' }), 0x10000n)).toBe('0x10000');
    expect(formatValue(f('bool'), false)).toBe('False');
    expect(formatValue(f('bytes'), Uint8Array.of(0xde, 0xad))).toBe('dead');
  });
});
