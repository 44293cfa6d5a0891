import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { analyze } from '../../src/analysis/pipeline.js';
import { buildPcap } from '../../src/report/pcap-writer.js';
import { ACK, PSH, SYN, tcpFrame } from '../helpers/frames.js';
import { KIND_FPDU } from '../../src/tui/pdu-index.js';
import { buildMpaConnection } from '../../src/generate/mpa-connection.js';
import { patternBytes, sendUlpdu } from '../../src/generate/mpa-encoder.js';
import { lineText } from '../../src/tui/lines.js';
import { capture, openModel, paneLines, paneText, paneTitle, type } from './helpers.js';

const tmp = mkdtempSync(join(tmpdir(), 'mpa-tui-vm-'));

/** Moves the PDU list to the FPDU at `seq`. */
function selectSeq(vm: Awaited<ReturnType<typeof openModel>>['vm'], seq: number): void {
  const ix = vm.model.index;
  const at = vm.visibleItems().findIndex((i) => ix.kind[i] === KIND_FPDU && ix.seq[i] === seq);
  expect(at).toBeGreaterThanOrEqual(0);
  vm.focus = 'pdus';
  vm.key('g', 'g');
  for (let k = 0; k < at; k++) vm.key('down');
}

describe('view model: errors.pcap', () => {
  it('lists the flow with its numbers, tcp.stream counted from 0', async () => {
    const { vm, model } = await openModel(capture('errors.pcap'));
    expect(model.state).toBe('done');
    const flows = paneText(vm, 'flows');
    expect(flows[0]).toMatch(/Stream\s+Client → Server/);
    const row = flows.find((l) => l.includes('10.0.0.1:40001 → 10.0.0.2:4420'))!;
    expect(row).toMatch(/^\s+0\s/);
    expect(row).toMatch(/startup/);
    expect(row).toMatch(/10\/1/);
    expect(vm.visibleCount()).toBe(15);
    expect(
      vm
        .status()
        .map((s) => s.t)
        .join(''),
    ).toMatch(/21 packets\s+1 flow\s+11 FPDUs\s+2 errors/);
  });

  it('navigates to the bad-CRC FPDU: tree says incorrect, bytes colour the CRC as bad', async () => {
    const { vm } = await openModel(capture('errors.pcap'));
    selectSeq(vm, 2397);
    const tree = paneText(vm, 'tree').join('\n');
    expect(tree).toContain('CRC: 0xa7f36a54 [incorrect, should be 0xa6f36a54]');
    const bytes = paneLines(vm, 'bytes');
    const all = bytes.map(lineText).join('\n');
    // Relative to the direction, as Wireshark shows it (the index keeps the absolute 2397).
    expect(all).toContain('FPDU at seq 1397');
    expect(all).toMatch(/SeqStart\+\d+/);
    expect(all).toMatch(/CRC seen 0xa7f36a54, expected 0xa6f36a54\s+BAD/);
    // The four CRC octets are drawn in the bad-CRC style (the last octets of the FPDU).
    vm.move('bytes', Infinity);
    const end = paneLines(vm, 'bytes');
    const crcSpans = end.flatMap((l) => l.filter((s) => s.s === 'crc-bad'));
    expect(crcSpans.map((s) => s.t)).toEqual(expect.arrayContaining(['a7', 'f3', '6a', '54']));
  });

  it('shows FPDUPTR expected vs seen and the marker grid for the wrong-FPDUPTR FPDU', async () => {
    const { vm } = await openModel(capture('errors.pcap'), { height: 80 });
    selectSeq(vm, 4953);
    const text = paneText(vm, 'bytes').join('\n');
    expect(text).toMatch(/marker boundary SeqStart\+\d+ \(\d+×512\)/);
    expect(text).toMatch(/FPDUPTR @\+4096: seen 172, expected 164\s+MISMATCH/);
    const markers = paneLines(vm, 'bytes').flatMap((l) => l.filter((s) => s.s === 'marker'));
    expect(markers.length).toBeGreaterThan(0);
  });

  it('moves with j/k, G/g, PgDn and Tab; Enter opens; the tree collapses and expands', async () => {
    const { vm } = await openModel(capture('errors.pcap'), { height: 100 });
    expect(vm.focus).toBe('flows');
    vm.key('tab');
    expect(vm.focus).toBe('pdus');
    vm.key('S-g', 'G');
    expect(vm.selectedItem()).toBe(vm.visibleItems()[14]);
    vm.key('g', 'g');
    expect(vm.selectedItem()).toBe(vm.visibleItems()[0]);
    vm.key('j', 'j');
    vm.key('j', 'j');
    vm.key('k', 'k');
    expect(vm.selectedItem()).toBe(vm.visibleItems()[1]);
    vm.key('pagedown');
    expect(vm.visibleItems().indexOf(vm.selectedItem()!)).toBeGreaterThan(5);
    selectSeq(vm, 2397);
    vm.key('enter');
    expect(vm.focus).toBe('tree');
    const before = paneText(vm, 'tree').length;
    expect(before).toBeGreaterThan(10);
    vm.key('g', 'g');
    vm.key('space', ' ');
    expect(paneText(vm, 'tree').length).toBeLessThan(before);
    expect(paneText(vm, 'tree')[0]).toMatch(/^▸/);
    vm.key('right');
    expect(paneText(vm, 'tree').length).toBe(before);
    vm.key('S-tab');
    expect(vm.focus).toBe('findings');
  });

  it('a good filter narrows the list; an empty one clears it', async () => {
    const { vm } = await openModel(capture('errors.pcap'));
    expect(vm.applyFilter('iwarp_mpa.crc_status == "bad"')).toBe(true);
    vm.settle();
    expect(vm.visibleCount()).toBe(1);
    expect(vm.model.index.seq[vm.visibleItems()[0]!]).toBe(2397);
    expect(vm.applyFilter('finding.severity == "error"')).toBe(true);
    vm.settle();
    expect(vm.visibleCount()).toBe(2);
    expect(vm.applyFilter('')).toBe(true);
    vm.settle();
    expect(vm.visibleCount()).toBe(15);
  });

  it('a bad filter typed after / stays in the prompt with the caret message', async () => {
    const { vm } = await openModel(capture('errors.pcap'));
    vm.key('/', '/');
    type(vm, 'iwarp_mpa.bogus == 1');
    vm.key('enter');
    expect(vm.prompt()).not.toBeNull();
    const err = vm.filterError();
    expect(err[0]).toMatch(/iwarp_mpa\.bogus/);
    expect(err[1]).toBe('    iwarp_mpa.bogus == 1');
    expect(err[2]).toBe('    ^~~~~~~~~~~~~~~');
    expect(vm.visibleCount()).toBe(15);
    vm.key('escape');
    expect(vm.prompt()).toBeNull();
    expect(vm.filterText).toBe('');
  });

  it('a filter with a type error is refused in the prompt as -Y refuses it (tshark type checks)', async () => {
    const { vm } = await openModel(capture('errors.pcap'));
    vm.key('/', '/');
    type(vm, 'iwarp_ddp.msn == "abc"');
    vm.key('enter');
    expect(vm.prompt()).not.toBeNull();
    const err = vm.filterError();
    expect(err[0]).toMatch(/cannot be converted from a string \("abc"\)/);
    expect(err[2]).toBe('                     ^~~~~');
    expect(vm.visibleCount()).toBe(15);
  });

  it('n and N jump between PDUs with findings', async () => {
    const { vm } = await openModel(capture('errors.pcap'));
    const ix = vm.model.index;
    vm.key('n', 'n');
    expect(ix.seq[vm.selectedItem()!]).toBe(2397);
    vm.key('n', 'n');
    expect(ix.seq[vm.selectedItem()!]).toBe(3121);
    vm.key('N', 'N');
    expect(ix.seq[vm.selectedItem()!]).toBe(2397);
    vm.key('N', 'N');
    expect(ix.seq[vm.selectedItem()!]).toBe(2397);
    expect(vm.message?.text).toMatch(/no earlier PDU/);
  });

  it('e keeps only PDUs with an error, and toggles back', async () => {
    const { vm } = await openModel(capture('errors.pcap'));
    vm.key('e', 'e');
    vm.settle();
    expect(vm.visibleItems().map((i) => vm.model.index.seq[i])).toEqual([2397, 4953]);
    expect(paneTitle(vm, 'pdus')).toContain('errors only');
    vm.key('e', 'e');
    vm.settle();
    expect(vm.visibleCount()).toBe(15);
  });

  it('Enter on a finding jumps to its PDU', async () => {
    const { vm } = await openModel(capture('errors.pcap'));
    vm.focus = 'findings';
    const list = paneText(vm, 'findings');
    const k = list.findIndex((l) => l.includes('mpa.fpduptr-mismatch'));
    for (let j = 0; j < k; j++) vm.key('down');
    vm.key('enter');
    expect(vm.focus).toBe('pdus');
    expect(vm.model.index.seq[vm.selectedItem()!]).toBe(4953);
  });

  it('the ladder shows the handshake, Request, Reply and first FPDU each way', async () => {
    const { vm } = await openModel(capture('errors.pcap'));
    vm.key('l', 'l');
    const lad = paneText(vm, 'findings').join('\n');
    expect(lad).toMatch(/1 \|-- SYN -+>\|/);
    expect(lad).toMatch(/2 \|<-+ SYN, ACK --\|/);
    expect(lad).toMatch(/MPA Request Rev 1/);
    expect(lad).toMatch(/<-+ MPA Reply/);
    expect(lad).toMatch(/6-8 \|-- first FPDU Send/);
    expect(lad).toMatch(/19 \|<-+ first FPDU Send/);
  });

  it('click selects a row and focuses its pane; the wheel scrolls', async () => {
    const { vm } = await openModel(capture('errors.pcap'));
    vm.click('pdus', 3);
    expect(vm.focus).toBe('pdus');
    expect(vm.selectedItem()).toBe(vm.visibleItems()[2]);
    vm.wheel('pdus', 3);
    expect(vm.selectedItem()).toBe(vm.visibleItems()[5]);
    vm.click('flows', 2);
    expect(vm.selectedFlowId()).toBe(1);
  });

  it('fits 80x24 and redraws on resize: panes tile the screen, no line wider than its pane', async () => {
    const { vm } = await openModel(capture('errors.pcap'));
    for (const [w, h] of [
      [80, 24],
      [120, 40],
      [200, 60],
      [80, 24],
    ] as const) {
      vm.resize(w, h);
      const panes = vm.panes();
      let area = 0;
      for (const p of panes) {
        expect(p.rect.left + p.rect.width).toBeLessThanOrEqual(w);
        expect(p.rect.top + p.rect.height).toBeLessThanOrEqual(h - 1);
        expect(p.rect.height).toBeGreaterThanOrEqual(3);
        area += p.rect.width * p.rect.height;
        expect(p.lines.length).toBeLessThanOrEqual(p.rect.height - 2);
        for (const l of p.lines) expect(Array.from(lineText(l)).length).toBeLessThanOrEqual(p.rect.width - 2);
      }
      expect(area).toBe(w * (h - 1));
      expect(
        Array.from(
          vm
            .status()
            .map((s) => s.t)
            .join(''),
        ).length,
      ).toBeLessThanOrEqual(w);
    }
    // The selection stays in view after shrinking.
    vm.resize(120, 40);
    vm.focus = 'pdus';
    vm.key('S-g', 'G');
    vm.resize(80, 24);
    const p = vm.panes().find((x) => x.id === 'pdus')!;
    expect(p.selected).toBeGreaterThan(0);
    expect(p.selected).toBeLessThan(p.lines.length);
  });

  it('w writes the PDUs listed as a pcap the pipeline reads back', async () => {
    const { vm } = await openModel(capture('errors.pcap'));
    vm.applyFilter('iwarp_mpa.crc_status == "bad"');
    vm.settle();
    vm.key('w', 'w');
    expect(vm.prompt()?.label).toMatch(/Write pcap/);
    const out = join(tmp, 'bad-crc.pcap');
    vm.key('C-u');
    type(vm, out);
    vm.key('enter');
    // The FPDU's frame with the flow's Request and Reply, as -w writes them.
    expect(vm.message?.text).toMatch(/wrote 3 frames/);
    const r = await analyze(out);
    expect(r.capture.packets).toBe(3);
    expect(r.flows[0]!.mpa?.detection).toBe('startup');
  });

  it('w on the flows pane writes the selected flow; the pipeline finds its findings again', async () => {
    const { vm } = await openModel(capture('errors.pcap'));
    vm.key('down');
    expect(vm.selectedFlowId()).toBe(1);
    vm.key('w', 'w');
    expect(vm.prompt()?.text).toBe('errors-stream0.pcap');
    const out = join(tmp, 'flow.pcap');
    vm.key('C-u');
    type(vm, out);
    vm.key('enter');
    expect(vm.message?.text).toMatch(/wrote \d+ frames/);
    const r = await analyze(out);
    expect(r.findings.byRule.get('mpa.crc-mismatch')).toBe(1);
    expect(r.findings.byRule.get('mpa.fpduptr-mismatch')).toBe(1);
  });

  it('follow keeps the newest PDU selected while the capture is read', async () => {
    const { analysisOptions, fileSource } = await import('../../cli/tui.js');
    const { CaptureModel } = await import('../../src/tui/capture-model.js');
    const { ViewModel } = await import('../../src/tui/view-model.js');
    const path = capture('sample.pcap');
    const { options } = analysisOptions({ capture: path, displayFilter: null, rules: null, mpa: [], checksums: false });
    const model = new CaptureModel(await fileSource(path, { ...options, chunkSize: 512 }, undefined));
    const vm = new ViewModel(model);
    vm.key('f', 'f');
    expect(vm.follow).toBe(true);
    const seen: number[] = [];
    model.onChange(() => {
      vm.pump(Infinity);
      if (vm.visibleCount()) seen.push(vm.visibleItems().indexOf(vm.selectedItem()!) - (vm.visibleCount() - 1));
    });
    await model.run();
    vm.settle();
    expect(vm.selectedItem()).toBe(vm.visibleItems()[vm.visibleCount() - 1]);
    expect(seen.every((d) => d === 0)).toBe(true);
    // Moving up leaves follow mode.
    vm.focus = 'pdus';
    vm.key('up');
    expect(vm.follow).toBe(false);
  });

  it('rebuilds records that left the cache from the index and the file: same tree, same Info', async () => {
    const full = await openModel(capture('sample.pcap'));
    const small = await openModel(capture('sample.pcap'), { cacheSize: 1 });
    const ix = full.model.index;
    let fpdus = 0;
    for (let i = 0; i < ix.count; i++) {
      if (ix.kind[i] !== KIND_FPDU) continue;
      fpdus++;
      const a = full.model.decode(i);
      const b = small.model.decode(i);
      expect(b.info).toBe(a.info);
      // The MPA part and DDP/RDMAP headers are the same; only the generated analysis subtree is not rebuilt.
      const proto = (t: typeof a.tree) => t.filter((n) => n.field.abbrev !== 'iwarp_ddp.analysis');
      expect(
        JSON.stringify(proto(b.tree), (_k, v: unknown) =>
          typeof v === 'bigint' ? v.toString() : v instanceof Uint8Array ? Array.from(v) : v,
        ),
      ).toBe(
        JSON.stringify(proto(a.tree), (_k, v: unknown) =>
          typeof v === 'bigint' ? v.toString() : v instanceof Uint8Array ? Array.from(v) : v,
        ),
      );
    }
    expect(fpdus).toBe(19);
    // A filter on DDP fields works on rebuilt records too.
    small.vm.applyFilter('iwarp_rdma.opcode == 3');
    small.vm.settle();
    full.vm.applyFilter('iwarp_rdma.opcode == 3');
    full.vm.settle();
    expect(small.vm.visibleItems()).toEqual(full.vm.visibleItems());
  });

  it('a new filter on a big capture re-dissects the file (replay) and agrees with record-by-record evaluation', async () => {
    const inline = await openModel(capture('sample.pcap'), { cacheSize: 1 });
    const replayed = await openModel(capture('sample.pcap'), { cacheSize: 1 });
    replayed.vm.replayMin = 0;
    for (const f of [
      'iwarp_rdma.opcode == 3',
      'iwarp_ddp.analysis.message_complete == 1',
      'finding.rule == "mpa.tcp-closed-between"',
    ]) {
      inline.vm.applyFilter(f);
      inline.vm.settle();
      replayed.vm.applyFilter(f);
      expect(replayed.vm.waiting()).toBe(true);
      const end = Date.now() + 20_000;
      while (replayed.vm.pending() && Date.now() < end) {
        replayed.vm.pump(40);
        await new Promise((r) => setTimeout(r, 5));
      }
      expect(replayed.vm.pending()).toBe(false);
      expect(replayed.vm.visibleCount()).toBeGreaterThan(0);
      // The analysis subtree is not rebuilt record by record, so only the replay matches on it.
      if (f.includes('analysis')) expect(inline.vm.visibleCount()).toBe(0);
      else expect(replayed.vm.visibleItems()).toEqual(inline.vm.visibleItems());
    }
  });

  it('sorts flows by errors and bytes with s', async () => {
    const { vm } = await openModel(capture('errors.pcap'));
    vm.key('s', 's');
    expect(vm.sort).toBe('errors');
    vm.key('s', 's');
    expect(vm.sort).toBe('bytes');
    expect(paneTitle(vm, 'flows')).toContain('sorted by bytes');
  });
});

describe('view model: startup ladder and field highlight', () => {
  it('writes the broken startup rule on its arrow', async () => {
    const c = buildMpaConnection({
      request: { res: 0x08 },
      reply: {},
      i2r: [{ ulpdu: sendUlpdu(1, patternBytes(100, 1)) }],
    });
    const path = join(tmp, 'reserved.pcap');
    writeFileSync(path, c.pcap);
    const { vm } = await openModel(path);
    vm.key('l', 'l');
    const lad = paneLines(vm, 'findings');
    const req = lad.find((l) => lineText(l).includes('MPA Request'))!;
    expect(lineText(req)).toMatch(/\|-- MPA Request.*✗ mpa\.reserved-flags/);
    expect(req.some((x) => x.s === 'warning' || x.s === 'error')).toBe(true);
    const rep = lad.find((l) => lineText(l).includes('MPA Reply'))!;
    expect(lineText(rep)).not.toContain('✗');
  });

  it('a segment lost from the capture shows as a gap row', async () => {
    const c = buildMpaConnection({
      request: { m: true, c: true },
      reply: { m: true, c: true },
      i2r: Array.from({ length: 6 }, (_, k) => ({ ulpdu: sendUlpdu(k + 1, patternBytes(900, k)) })),
      scenario: { drop: (i, dir) => dir === 0 && i === 4 },
    });
    const path = join(tmp, 'loss.pcap');
    writeFileSync(path, c.pcap);
    const { vm } = await openModel(path);
    const rows = paneText(vm, 'pdus');
    expect(rows.some((l) => / gap /.test(l))).toBe(true);
    expect(rows.filter((l) => / finding /.test(l)).every((l) => !/capture-loss/.test(l))).toBe(true);
  });

  it('stays silent on a clean startup', async () => {
    const { vm } = await openModel(capture('sample.pcap'));
    vm.key('l', 'l');
    const lad = paneText(vm, 'findings').join('\n');
    expect(lad).toMatch(/MPA Request/);
    expect(lad).toMatch(/RTR /);
    expect(lad).not.toContain('✗');
  });

  it('a tree field selected highlights its octets in the bytes pane', async () => {
    const { vm } = await openModel(capture('errors.pcap'), { height: 80 });
    selectSeq(vm, 2397);
    vm.key('enter');
    expect(vm.focus).toBe('tree');
    // "CRC: ..." is a field of 4 octets at the end of the FPDU.
    const rows = paneText(vm, 'tree');
    const at = rows.findIndex((l) => l.trim().startsWith('CRC: 0xa7f36a54'));
    for (let k = 0; k < at; k++) vm.key('down');
    vm.move('bytes', Infinity);
    const lit = paneLines(vm, 'bytes').flatMap((l) => l.filter((x) => x.s === 'field').map((x) => x.t));
    expect(lit).toEqual(['a7', 'f3', '6a', '54']);
    // ULPDU length: the two octets of the length field.
    vm.key('g', 'g');
    vm.key('down');
    vm.move('bytes', -Infinity);
    const len = paneLines(vm, 'bytes').flatMap((l) => l.filter((x) => x.s === 'field').map((x) => x.t));
    expect(len).toEqual(['02', 'c4']);
  });

  it('-Y as the initial filter applies to records as they are read', async () => {
    const { vm } = await openModel(capture('errors.pcap'), { filter: 'finding.rule == "mpa.pad-not-zero"' });
    expect(vm.visibleItems().map((i) => vm.model.index.seq[i])).toEqual([7313]);
    expect(
      vm
        .status()
        .map((x) => x.t)
        .join(''),
    ).toContain('filter: finding.rule == "mpa.pad-not-zero"');
  });
});

describe('view model: a stream source (no random access)', () => {
  it('browses what it keeps and says when the octets are gone', async () => {
    const { analysisOptions, streamSource } = await import('../../cli/tui.js');
    const { CaptureModel } = await import('../../src/tui/capture-model.js');
    const { ViewModel } = await import('../../src/tui/view-model.js');
    const { WindowFrames } = await import('../../src/report/frame-store.js');
    const bytes = readFileSync(capture('errors.pcap'));
    const { options } = analysisOptions({ capture: '-', displayFilter: null, rules: null, mpa: [], checksums: false });
    // Keep only the last 2 frames and 1 record: the first FPDUs must be rebuilt without their octets.
    const src = streamSource(
      'live',
      {
        ...options,
        stream: (async function* () {
          yield new Uint8Array(bytes);
        })(),
      },
      undefined,
      new WindowFrames(1 << 20, 2),
    );
    const model = new CaptureModel(src, 1);
    const vm = new ViewModel(model);
    vm.resize(120, 40);
    await model.run();
    vm.settle();
    expect(model.state).toBe('done');
    expect(vm.visibleCount()).toBe(15);
    selectSeq(vm, 1025);
    expect(paneText(vm, 'bytes').join('\n')).toContain('octets not available');
    expect(paneText(vm, 'tree').join('\n')).toContain('ULPDU length: 318');
    expect(paneText(vm, 'pdus').join('\n')).toMatch(/1397 FPDU\s+708\s+2 BAD/); // relative seq (absolute 2397)
  });
});

describe('view model: captures with nothing to browse', () => {
  it('an empty capture shows a helpful screen, not a blank one', async () => {
    const path = join(tmp, 'empty.pcap');
    writeFileSync(path, buildPcap(1, []));
    const { vm, model } = await openModel(path);
    expect(model.state).toBe('done');
    expect(vm.overlay()?.title).toBe('Empty capture');
    expect(vm.overlay()!.lines.map(lineText).join('\n')).toContain('holds no packets');
    vm.key('x', 'x');
    expect(vm.overlay()).toBeNull();
    expect(paneText(vm, 'pdus').join('\n')).toContain('no MPA records');
  });

  it('a capture without MPA says so and suggests --mpa', async () => {
    const path = join(tmp, 'nompa.pcap');
    const t = { src: '10.0.0.1', dst: '10.0.0.2', sport: 5000, dport: 80 };
    const frames = [
      tcpFrame({ ...t, seq: 100, flags: SYN }),
      tcpFrame({ src: t.dst, dst: t.src, sport: 80, dport: 5000, seq: 900, ack: 101, flags: SYN | ACK }),
      tcpFrame({
        ...t,
        seq: 101,
        ack: 901,
        flags: ACK | PSH,
        payload: new TextEncoder().encode('GET / HTTP/1.0\r\n\r\n'),
      }),
    ].map((data, k) => ({ tsSec: k, tsNsec: 0, data }));
    writeFileSync(path, buildPcap(1, frames));
    const { vm } = await openModel(path);
    const ov = vm.overlay()!;
    expect(ov.title).toBe('No MPA in this capture');
    expect(ov.lines.map(lineText).join('\n')).toMatch(/3 packets, 1 TCP flow;.*--mpa/s);
    vm.key('x', 'x');
    expect(paneText(vm, 'flows').join('\n')).toMatch(/10\.0\.0\.1:5000 → 10\.0\.0\.2:80\s+not MPA/);
  });

  it('an unreadable capture shows why, and stays until q', async () => {
    const path = join(tmp, 'garbage.pcap');
    writeFileSync(path, 'this is not a capture at all, just text\n');
    const { vm, model } = await openModel(path);
    expect(model.state).toBe('failed');
    const ov = vm.overlay()!;
    expect(ov.title).toBe('Cannot read the capture');
    expect(ov.tone).toBe('error');
    expect(ov.lines.map(lineText).join('\n')).toContain('garbage.pcap');
    expect(vm.key('x', 'x')).toBe('redraw');
    expect(vm.overlay()).not.toBeNull();
    expect(vm.key('q', 'q')).toBe('quit');
  });

  it('a missing file is a failed model with the reason, not an exception', async () => {
    const { vm, model } = await openModel(join(tmp, 'does-not-exist.pcap'));
    expect(model.state).toBe('failed');
    expect(vm.overlay()!.lines.map(lineText).join('\n')).toMatch(/does-not-exist\.pcap/);
  });

  it('? shows every key; any key closes it', async () => {
    const { vm } = await openModel(capture('errors.pcap'));
    vm.key('?', '?');
    const help = vm.overlay()!.lines.map(lineText).join('\n');
    for (const k of ['PgUp', 'Tab', 'Enter', '/', 'n  N', 'e', 'f', 'w', 'q']) expect(help).toContain(k);
    vm.key('x', 'x');
    expect(vm.overlay()).toBeNull();
  });
});

describe('view model: the upper layers above RDMAP (corpus SMB Direct and NFS-over-RDMA captures)', () => {
  const smbd = capture('corpus/smbd-clean.pcap');
  const nfs = capture('corpus/nfsrdma-clean.pcap');
  // smbd-clean's first READ (src/generate/smbd-scenarios.ts smbdCleanExchange): 64 KiB over RDMA_V1, MessageId 4.
  const READ = 'SMB2 READ Request MessageId 4 File offset 0 Len 65536 via RDMA_V1';

  it('the flow table names the upper layer decoded and how it was chosen', async () => {
    const { vm } = await openModel(smbd, { width: 220 });
    const row = paneText(vm, 'flows').find((l) => l.includes('10.0.0.1:50123 → 10.0.0.2:5445'))!;
    expect(row).toMatch(/SMB Direct: \d+ messages, from private data /);
    expect(row).not.toContain('(port)');
  });

  it('the PDU list shows the SMB2 Info first, the RDMAP message after it', async () => {
    const { vm } = await openModel(smbd, { width: 220, height: 200 });
    const pdus = paneText(vm, 'pdus');
    expect(pdus.some((l) => l.includes('SMB Direct Negotiate Request  [Send QN=0 MSN=1 MO=0 L len=20]'))).toBe(true);
    expect(pdus.some((l) => l.includes(`${READ}  [Send QN=0 MSN=7`))).toBe(true);
  });

  it('the detail tree holds the SMB Direct and SMB2 subtrees after the RDMAP message', async () => {
    const { vm, model } = await openModel(smbd, { width: 220, height: 400 });
    const at = vm.visibleItems().findIndex((i) => model.infoOf(i).startsWith(READ));
    expect(at).toBeGreaterThan(0);
    vm.focus = 'pdus';
    vm.key('g', 'g');
    for (let k = 0; k < at; k++) vm.key('down');
    const tree = paneText(vm, 'tree').join('\n');
    const rdmap = tree.indexOf('Remote Direct Memory Access Protocol, Send');
    const smbDirect = tree.indexOf('SMB-Direct (SMB RDMA Transport)');
    expect(rdmap).toBeGreaterThan(0);
    expect(smbDirect).toBeGreaterThan(rdmap);
    expect(tree).toContain(`SMB2 (Server Message Block Protocol version 2), ${READ}`);
    expect(tree).toContain('Channel: RDMA V1 (0x00000001)');
  });

  it('a record rebuilt from the index keeps the upper layer Info', async () => {
    const { vm, model } = await openModel(smbd, { width: 220, cacheSize: 1 });
    const items = vm.visibleItems();
    // Reading another item evicts the first from a cache of one: the READ is rebuilt from its frames.
    const read = items.find((i) => model.infoOf(i).startsWith(READ))!;
    model.decode(items[0]!);
    const d = model.decode(read);
    expect(d.rebuilt).toBe(true);
    expect(d.info.startsWith(`${READ}  [Send`)).toBe(true);
  });

  it('a display filter on SMB2 fields narrows the list to the READ and its response', async () => {
    const { vm, model } = await openModel(smbd, { width: 220, filter: 'smb2.cmd == 8' });
    const infos = vm.visibleItems().map((i) => model.infoOf(i));
    expect(infos.map((x) => x.replace(/^(SMB2 \S+ \S+ MessageId \d+).*$/, '$1'))).toEqual([
      'SMB2 READ Request MessageId 4',
      'SMB2 READ Response MessageId 4',
    ]);
  });

  it('NFS over RDMA: RPC Info in the list, RPC-over-RDMA in the flow table', async () => {
    const { vm } = await openModel(nfs, { width: 220 });
    const row = paneText(vm, 'flows').find((l) => l.includes('→ 10.0.0.2:20049'))!;
    expect(row).toMatch(/RPC-over-RDMA: \d+ messages, from private data /);
    expect(paneText(vm, 'pdus').some((l) => l.includes('RPC Call NFSv3 GETATTR xid 0x'))).toBe(true);
  });
});
