/**
 * The TUI on an SMB Direct capture in a real terminal (tmux): the flow table names the upper layer
 * decoded, the PDU list shows the SMB2 Info, a display filter on SMB2 fields narrows the list, and
 * the detail tree of the READ request holds the SMB Direct and SMB2 subtrees. Skipped, with the
 * reason in the test name, when tmux is not installed.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { CLI, ROOT, requireBuilt } from '../cli/helpers.js';
import { HAVE_TMUX, Tmux } from './tmux.js';

const pcap = join(ROOT, 'captures', 'corpus', 'smbd-clean.pcap');

describe.skipIf(!HAVE_TMUX)(
  `mpa-dissect tui on an SMB Direct capture${HAVE_TMUX ? '' : ' (skipped: tmux is not installed)'}`,
  () => {
    let t: Tmux;
    beforeAll(() => requireBuilt());
    afterEach(() => t?.kill());

    it('flow table, PDU list, a filter on smb2.cmd and the SMB2 tree of the READ', async () => {
      t = new Tmux();
      t.start(`node ${CLI} tui ${pcap}`, 200, 160, ROOT);
      const s = await t.waitFor((x) => /FPDUs/.test(x) && /smbd-clean\.pcap/.test(x) && !/reading/.test(x));
      expect(s).toMatch(/│\s+0 10\.0\.0\.1:50123 → 10\.0\.0\.2:5445 .*SMB Direct: \d+ messages, from private data/);
      expect(s).toMatch(/│\s+6 [0-9.]+ →\s+\d+ FPDU\s+38\s+ok\s+SMB Direct Negotiate Request {2}\[Send QN=0 MSN=1/);
      t.keys('/');
      await t.waitFor((x) => x.includes('Display filter:'));
      t.text('smb2.cmd == 8');
      t.keys('Enter');
      const f = await t.waitFor((x) => /PDUs: all flows, 2 shown \(filtered\)/.test(x));
      expect(f).toMatch(/SMB2 READ Request MessageId 4 File offset 0 Len 65536 via RDMA_V1 {2}\[Send/);
      expect(f).toMatch(/SMB2 READ Response MessageId 4 DataRemaining 65536 {2}\[Send/);
      // To the list, its first line (the READ request): the detail pane shows its tree.
      t.keys('Tab', 'Down', 'Up');
      const d = await t.waitFor((x) => x.includes('SMB-Direct (SMB RDMA Transport)'));
      expect(d).toMatch(/Remote Direct Memory Access Protocol, Send/);
      expect(d).toMatch(/SMB2 \(Server Message Block Protocol version 2\), SMB2 READ Request MessageId 4/);
      expect(d).toMatch(/Channel: RDMA V1 \(0x00000001\)/);
    });
  },
);
