/**
 * The TUI on a TUF capture in a real terminal (tmux): the flow list says TUF, the PDU list shows
 * the framing PDUs, n opens the one with a second key: its tree and its octets. Skipped, with the
 * reason in the test name, when tmux is not installed.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, ROOT, requireBuilt } from '../cli/helpers.js';
import { HAVE_TMUX, Tmux } from './tmux.js';
import { buildScenario } from '../../src/generate/scenario.js';
import { alignedStream, ulpPdus } from '../../src/generate/tuf.js';

const tmp = mkdtempSync(join(tmpdir(), 'mpa-tui-tuf-'));
const pcap = join(tmp, 'tuf-second-key.pcap');

describe.skipIf(!HAVE_TMUX)(
  `mpa-dissect tui on a TUF capture${HAVE_TMUX ? '' : ' (skipped: tmux is not installed)'}`,
  () => {
    let t: Tmux;
    beforeAll(() => {
      requireBuilt();
      const a = alignedStream(0x1a2b3c4d5e6f, ulpPdus([100, 200, 300, 50, 60], 3), {
        keys: (i) => (i === 4 ? 0x010203040506 : 0x1a2b3c4d5e6f),
      });
      writeFileSync(pcap, buildScenario([{ dir: 0, bytes: a.bytes, cut: a.cut }]).pcap);
    });
    afterEach(() => t?.kill());

    it('flow list, PDU list, tree and bytes of a TUF framing PDU with a second key', async () => {
      t = new Tmux();
      t.start(`node ${CLI} tui ${pcap}`, 140, 45, ROOT);
      const s = await t.waitFor((x) => /FPDUs/.test(x) && /tuf-second-key\.pcap/.test(x) && !/reading/.test(x));
      expect(s).toMatch(/\n│\s+0 10\.0\.0\.1:40001 → 10\.0\.0\.2:4420\s+TUF align\s+1\s+0\s+5\/0/);
      // Sequence numbers relative to the direction, as Wireshark shows them (absolute 1001 and 1683).
      expect(s).toMatch(/│\s+4 [0-9.]+ →\s+1 TUF\s+100 /);
      expect(s).toMatch(/TUF key 0x1a2b3c4d5e6f aligned/);
      t.keys('Tab', 'n');
      const d = await t.waitFor((x) => /ULP Framing for TCP, Length: 60, Key: 0x010203040506/.test(x));
      expect(d).toMatch(/Key: 0x010203040506 \[not this direction's key\]/);
      expect(d).toMatch(/tuf\.second-key/);
      expect(d).toMatch(/TUF framing PDU at seq 683, 68 octets/);
      expect(d).toMatch(/SECOND KEY/);
      expect(d).toMatch(/00 3c 01 02 03 04 05 06/);
    });
  },
);
