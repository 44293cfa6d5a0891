/**
 * What the screen shows of the view state: each pane's title and styled lines (scrolled and cut to
 * its inner size), the status bar and the overlay. Reads the state only.
 */
import { basename } from 'node:path';
import { isFpdu } from '../report/events.js';
import { nodeText } from '../report/tree-text.js';
import { bytesLines, fieldSpan } from './bytes-pane.js';
import type { CaptureModel, FlowRow } from './capture-model.js';
import { ladderLines } from './ladder.js';
import { requestsPane } from './requests-pane.js';
import { clip, fit, padLeft, plural, type Line, type Span, type StyleName } from './lines.js';
import { frameLabel, pduColumns, pduHeader } from './pdu-columns.js';
import { helpOverlay, noticeOverlay, wrapWords } from './overlays.js';
import {
  KIND_FINDING,
  KIND_FPDU,
  V_CRC_BAD,
  V_ERROR,
  V_INFO,
  V_MARKER_BAD,
  V_PAD_NONZERO,
  V_WARNING,
} from './pdu-index.js';
import { ALL, ViewState } from './view-state.js';
import { PANES, type Overlay, type PaneId, type PaneView } from './view-types.js';

export abstract class ViewPanes extends ViewState {
  // ------------------------------------------------------------------------------------------
  // What each pane shows
  // ------------------------------------------------------------------------------------------

  panes(): PaneView[] {
    const rects = this.layout();
    return PANES.map((id) => {
      const { w, h } = this.inner(id);
      // An unreadable capture: the notice says why; the panes would only show the same finding cut.
      const c = this.unreadable() ? { title: PANE_NAMES[id], lines: [], selected: -1 } : this.paneContent(id, w, h);
      return {
        id,
        title:
          Array.from(c.title).length > w - 3
            ? Array.from(c.title)
                .slice(0, Math.max(1, w - 4))
                .join('') + '…'
            : c.title,
        rect: rects[id],
        lines: c.lines.map((l) => clip(l, w)),
        selected: c.selected,
        focused: this.focus === id,
      };
    });
  }

  /** A capture file that could not be read at all (not a live capture: its notice differs). */
  protected unreadable(): boolean {
    return this.model.state === 'failed' && !this.model.source.live;
  }

  private paneContent(id: PaneId, w: number, h: number): { title: string; lines: Line[]; selected: number } {
    switch (id) {
      case 'flows':
        return this.flowsPane(w, h);
      case 'pdus':
        return this.pduPane(h);
      case 'tree':
        return this.treePane(h);
      case 'bytes': {
        const all = this.bytesPaneLines();
        const top = Math.max(0, Math.min(this.bytesTop, all.length - h));
        return { title: 'Bytes', lines: all.slice(top, top + h), selected: -1 };
      }
      case 'findings':
        if (this.requests) return requestsPane(this.model.latency, this.requestRows.get(), this.reqSel, this.reqTop, h);
        return this.ladder ? this.ladderPane(w, h) : this.findingsPane(h);
    }
  }

  private flowsPane(w: number, h: number): { title: string; lines: Line[]; selected: number } {
    const m = this.model;
    const ids = [ALL, ...this.flowOrder];
    // The endpoints column as wide as the widest pair shown (IPv6 pairs are long), within reason.
    let epW = 15;
    for (let k = this.flowTop; k < Math.min(ids.length, this.flowTop + h - 1); k++) {
      const f = ids[k] === ALL ? undefined : m.flow(ids[k]!);
      if (f) epW = Math.max(epW, Array.from(`${f.client} → ${f.server}`).length);
    }
    epW = Math.min(epW, Math.max(30, w - 48));
    // The upper layer comes before the RFC 6581 details and takes the room they leave (its name
    // alone when the whole text does not fit), so 120 columns show "NVMe/TCP", not "NVMe/".
    let upperW = 5;
    for (let k = this.flowTop; k < Math.min(ids.length, this.flowTop + h - 1); k++) {
      const f = ids[k] === ALL ? undefined : m.flow(ids[k]!);
      if (f?.upper) upperW = Math.max(upperW, Array.from(f.upper).length);
    }
    upperW = Math.min(upperW, Math.max(UPPER_MIN, w - (epW + FLOW_FIXED)));
    // Most telling columns first, so a narrow terminal cuts the least useful ones.
    const head =
      `${padLeft('Stream', 6)} ${fit('Client → Server', epW)} ${fit('MPA', 9)} ${padLeft('Err', 4)} ${padLeft('Warn', 4)} ${padLeft('FPDUs c→s/s→c', 13)} ${padLeft('Bytes', 10)} ` +
      `${fit('Upper', upperW)} Rev M   C P2P RTR IRD/ORD`;
    const lines: Line[] = [[{ t: head, s: 'head' }]];
    for (let k = this.flowTop; k < Math.min(ids.length, this.flowTop + h - 1); k++) {
      const id = ids[k]!;
      if (id === ALL) {
        lines.push([
          {
            t: `${padLeft('*', 6)} all flows (${this.flowOrder.length}), ${plural(m.fpdus, 'FPDU')}, ${plural(m.errors, 'error')}, ${plural(m.warnings, 'warning')}`,
          },
        ]);
        continue;
      }
      const f = m.flow(id)!;
      const q = f.request;
      const p = f.reply;
      const e = q?.enhancedBlock ?? null;
      const ep = p?.enhancedBlock ?? null;
      const yn = (v: boolean | undefined): string => (v === undefined ? '-' : v ? '1' : '0');
      // RTR kinds the Initiator offered (RFC 6581 §5): S send, W write, R read.
      const rtr = e ? `${e.rtr.send ? 'S' : ''}${e.rtr.write ? 'W' : ''}${e.rtr.read ? 'R' : ''}` || '-' : '-';
      const irdOrd = e ? `${e.ird}/${e.ord}${ep ? ` ${ep.ird}/${ep.ord}` : ''}` : '-';
      const line: Line = [
        {
          t: `${padLeft(String(id - 1), 6)} ${fit(`${f.client} → ${f.server}`, epW)} ${fit(f.tuf ? (f.tuf === 'alignment' ? 'TUF align' : 'TUF mark') : (mpaLabel(f) ?? (m.state === 'done' ? 'not MPA' : '…')), 9)} `,
        },
        { t: padLeft(String(f.errors), 4), ...(f.errors ? { s: 'error' as StyleName } : {}) },
        { t: ' ' },
        { t: padLeft(String(f.warnings), 4), ...(f.warnings ? { s: 'warning' as StyleName } : {}) },
        {
          t:
            ` ${padLeft(`${f.fpdus[0]}/${f.fpdus[1]}`, 13)} ${padLeft(String(f.bytes[0] + f.bytes[1]), 10)} ` +
            `${fit(upperLabel(f.upper, upperW), upperW)} ` +
            `${fit(q ? String(q.rev) : p ? String(p.rev) : '-', 3)} ${fit(`${yn(q?.m)}/${yn(p?.m)}`, 3)} ${q && p ? (q.c || p.c ? '1' : '0') : yn(q?.c ?? p?.c)} ` +
            `${fit(e ? (e.p2p ? 'yes' : 'no') : '-', 3)} ${fit(rtr, 3)} ${irdOrd}`,
        },
      ];
      lines.push(line);
    }
    return {
      title: `Flows (tcp.stream; sorted by ${this.sort}; s to change)`,
      lines,
      selected: this.flowSel - this.flowTop + 1,
    };
  }

  private pduPane(h: number): { title: string; lines: Line[]; selected: number } {
    const m = this.model;
    const ix = m.index;
    const rows = h - 1;
    const end = Math.min(this.visible.length, this.pduTop + rows);
    // The page's labels first: No. and Seq are as wide as the widest on the page.
    const frameLabels: string[] = [];
    const seqLabels: string[] = [];
    const timeLabels: string[] = [];
    for (let k = this.pduTop; k < end; k++) {
      const i = this.visible.get(k);
      frameLabels.push(frameLabel(ix.framesOf(i)));
      timeLabels.push(ix.time[i]!.toFixed(6));
      seqLabels.push(ix.kind[i] === KIND_FINDING && ix.seq[i] === 0 ? '' : String(m.shownSeq(i)));
    }
    const cols = pduColumns(this.width, frameLabels, seqLabels, timeLabels);
    const lines: Line[] = [[{ t: pduHeader(cols), s: 'head' }]];
    for (let k = this.pduTop; k < end; k++) {
      const i = this.visible.get(k);
      const fl = frameLabels[k - this.pduTop]!;
      const frames = fl.length > cols.noW ? frameLabel(ix.framesOf(i), cols.noW) : fl;
      const kind = ix.kind[i]!;
      const v = ix.verdict[i]!;
      const isF = kind === KIND_FPDU;
      const crc = !isF ? '' : ix.crc[i] === 0 ? 'n/a' : ix.crc[i] === 1 ? 'ok' : ix.crc[i] === 3 ? 'SWP' : 'BAD';
      const info = m.infoOf(i);
      const sev: StyleName | undefined = v & V_ERROR ? 'error' : v & V_WARNING ? 'warning' : undefined;
      const spans: Span[] = [
        {
          t: `${padLeft(frames, cols.noW)} ${cols.time ? `${padLeft(timeLabels[k - this.pduTop]!, cols.timeW)} ` : ''}${ix.dir[i] === 0 ? '→' : '←'} ${padLeft(seqLabels[k - this.pduTop]!, cols.seqW)} ${fit(m.kindText(i), 7)} ${padLeft(kind === KIND_FINDING ? '' : String(isF ? ix.lengthField[i] : ix.ulpduLength[i]), 5)} ${padLeft(isF && ix.markerCount[i] ? String(ix.markerCount[i]) : '', 2)} `,
        },
        { t: fit(crc, 3), ...(v & V_CRC_BAD ? { s: 'error' as StyleName } : {}) },
        { t: ' ' },
      ];
      const badges = [
        v & V_ERROR ? '[E]' : '',
        v & V_WARNING ? '[W]' : '',
        v & V_INFO ? '[i]' : '',
        v & V_MARKER_BAD ? '[FPDUPTR]' : '',
        v & V_PAD_NONZERO ? '[PAD]' : '',
      ]
        .filter((x) => x)
        .join('');
      if (badges) spans.push({ t: badges + ' ', ...(sev ? { s: sev } : { s: 'dim' as StyleName }) });
      spans.push({ t: info, ...(kind === KIND_FINDING && sev ? { s: sev } : {}) });
      lines.push(spans);
    }
    if (this.visible.length === 0) lines.push([{ t: this.emptyListText(), s: 'dim' }]);
    const scope = this.selectedFlow === ALL ? 'all flows' : `tcp.stream ${this.selectedFlow - 1}`;
    const extra = [
      this.filter ? 'filtered' : '',
      this.errorsOnly ? 'errors only' : '',
      this.follow ? 'follow' : '',
      this.pending() ? 'filtering…' : '',
    ]
      .filter((x) => x)
      .join(', ');
    return {
      title: `PDUs: ${scope}, ${this.visible.length} shown${extra ? ` (${extra})` : ''}`,
      lines,
      selected: this.visible.length ? this.pduSel - this.pduTop + 1 : -1,
    };
  }

  private emptyListText(): string {
    const m = this.model;
    if (m.state === 'reading')
      return m.source.live ? `capturing on ${m.source.live.iface}: no MPA records yet` : 'reading…';
    if (this.filter || this.errorsOnly) return 'nothing matches (/ to change the filter, e to leave errors only)';
    if (m.index.count === 0) return 'no MPA records in this capture';
    return 'no MPA records in this flow';
  }

  private treePane(h: number): { title: string; lines: Line[]; selected: number } {
    const rows = this.treeRows();
    const d = this.current?.decoded;
    const lines: Line[] = [];
    for (let k = this.treeTop; k < Math.min(rows.length, this.treeTop + h); k++) {
      const r = rows[k]!;
      const has = (r.node.children?.length ?? 0) > 0;
      const sign = has ? (this.collapsed.has(r.path) ? '▸ ' : '▾ ') : '  ';
      const text = nodeText(r.node);
      const bad =
        /\[FPDUPTR mismatch\]|\[expected|incorrect|CRC status: bad|byte-swapped|not zero|Malformed|damaged/.test(text);
      lines.push([
        {
          t: '  '.repeat(r.depth) + sign + text,
          ...(bad ? { s: 'error' as StyleName } : r.depth === 0 ? { s: 'bold' as StyleName } : {}),
        },
      ]);
    }
    if (!d) lines.push([{ t: 'select a PDU', s: 'dim' }]);
    else if (rows.length === 0)
      for (const f of this.model.findingsOf(this.current!.item))
        lines.push([
          {
            t: `${f.rule}: ${f.message}`,
            s: f.severity === 'error' ? 'error' : f.severity === 'warning' ? 'warning' : 'info',
          },
        ]);
    const fs = d ? this.model.findingsOf(this.current!.item) : [];
    // A stream keeps only its recent frames: an older record is what the index remembers of it.
    const gone =
      d?.rebuilt &&
      d.record &&
      !this.model.source.randomAccess &&
      this.model.wireBytes(this.current!.item, d.record) === null;
    const title = d
      ? `Detail${gone ? ' (no longer held: older than the window of recent frames; from the index, octets gone)' : d.rebuilt ? ' (rebuilt from the index; no DDP analysis subtree)' : ''}${fs.length && rows.length ? `, ${fs.length} finding${fs.length > 1 ? 's' : ''}` : ''}`
      : 'Detail';
    return { title, lines, selected: rows.length ? this.treeSel - this.treeTop : -1 };
  }

  protected bytesPaneLines(): Line[] {
    const cur = this.current;
    if (!cur?.decoded.record)
      return [[{ t: cur ? 'no octets: this is a finding, not a record' : 'select a PDU', s: 'dim' }]];
    const r = cur.decoded.record;
    const fl = this.model.flow(r.flow);
    const seqStart = fl ? fl.seqStart[r.dir] : null;
    let hl: [number, number] | null = null;
    const row = this.treeRows()[this.treeSel];
    // Lit while the tree has the focus (revealField scrolled them into view); the bytes pane itself
    // shows each octet's class (length, marker, PAD, CRC) instead.
    if (row && row.node.offset !== undefined && this.focus === 'tree')
      hl = fieldSpan(r, row.mpa, row.node.offset, row.node.length ?? 1);
    // Without a startup frame (heuristic or forced lock-on) SeqStart is not known: offsets count from the FPDU.
    return bytesLines(
      r,
      this.model.wireBytes(cur.item, r),
      isFpdu(r) ? seqStart : null,
      hl,
      this.inner('bytes').w,
      fl ? fl.seqBase[r.dir] : null,
    );
  }

  /**
   * Scrolls the bytes pane to the octets of the tree field selected (as Wireshark and termshark
   * do): the first lit row a third of the way down, unless it is already in view.
   */
  protected revealField(): void {
    const lines = this.bytesPaneLines();
    const at = lines.findIndex((l) => l.some((sp) => sp.s === 'field'));
    if (at < 0) return;
    const h = this.inner('bytes').h;
    const top = Math.max(0, Math.min(this.bytesTop, lines.length - h));
    if (at >= top && at < top + h) return;
    this.bytesTop = Math.max(0, Math.min(at - Math.floor(h / 3), lines.length - h));
  }

  private findingsPane(h: number): { title: string; lines: Line[]; selected: number } {
    const list = this.findingList();
    const m = this.model;
    const lines: Line[] = [];
    for (let k = this.findTop; k < Math.min(list.length, this.findTop + h); k++) {
      const f = m.findings[list[k]!]!;
      const s: StyleName = f.severity === 'error' ? 'error' : f.severity === 'warning' ? 'warning' : 'info';
      lines.push([
        { t: fit(f.severity, 7) + ' ', s },
        {
          t: `${f.rule}${f.rfcErrorCode !== null ? ` [MPA error ${f.rfcErrorCode}]` : ''} fr ${f.frames.slice(0, 3).join(',')}${f.frames.length > 3 ? '…' : ''}: ${f.message}`,
        },
      ]);
    }
    if (list.length === 0) lines.push([{ t: m.state === 'reading' ? 'none yet' : 'no findings', s: 'dim' }]);
    const scope =
      this.captureFindings || this.selectedFlow === ALL ? 'whole capture' : `tcp.stream ${this.selectedFlow - 1}`;
    const omitted = m.findingsOmitted ? `, ${m.findingsOmitted} more not kept` : '';
    return {
      title: `Findings: ${scope}, ${list.length}${omitted}`,
      lines,
      selected: list.length ? this.findSel - this.findTop : -1,
    };
  }

  private ladderPane(w: number, h: number): { title: string; lines: Line[]; selected: number } {
    const id =
      this.selectedFlow !== ALL
        ? this.selectedFlow
        : this.current
          ? this.model.index.flow[this.current.item]!
          : this.flowOrder[0];
    const fl = id !== undefined ? this.model.flow(id) : undefined;
    if (!fl) return { title: 'Startup ladder', lines: [[{ t: 'select a flow', s: 'dim' }]], selected: -1 };
    return {
      title: `Startup ladder: tcp.stream ${fl.id - 1}`,
      lines: ladderLines(this.model, fl, w).slice(0, h),
      selected: -1,
    };
  }

  // ------------------------------------------------------------------------------------------
  // Status, help, notices
  // ------------------------------------------------------------------------------------------

  status(): Line {
    return this.withMessage(this.statusBase());
  }

  /** The status bar's spans before the message. */
  private statusBase(): Span[] {
    const m = this.model;
    const src = m.source;
    const progress =
      m.state === 'reading'
        ? src.totalBytes
          ? ` reading ${Math.floor((100 * m.bytesRead) / Math.max(1, src.totalBytes))}%`
          : ' reading…'
        : m.state === 'failed'
          ? ' unreadable'
          : '';
    if (src.live) return this.liveStatus(src.live);
    const spans: Span[] = [
      { t: ` ${basename(src.label)}`, s: 'bold' },
      { t: `  ${plural(m.packets, 'packet')}  ${plural(m.flows.length, 'flow')}  ${plural(m.fpdus, 'FPDU')}  ` },
      { t: plural(m.errors, 'error'), ...(m.errors ? { s: 'error' as StyleName } : {}) },
      { t: '  ' },
      { t: plural(m.warnings, 'warning'), ...(m.warnings ? { s: 'warning' as StyleName } : {}) },
      { t: this.filterText ? `  filter: ${this.filterText}` : '  no filter' },
    ];
    if (progress) spans.push({ t: ` ${progress}`, s: 'warning' });
    return spans;
  }

  /** The message joins the status bar when it fits whole there; otherwise messagePopup shows it. */
  private withMessage(spans: Span[]): Line {
    const msg = this.message;
    if (msg && !this.messageTooLong(spans))
      spans.push({ t: `  ${msg.text}`, s: msg.tone === 'error' ? 'error' : 'good' });
    return statusLine(spans, this.width);
  }

  private messageTooLong(base: readonly Span[]): boolean {
    if (!this.message) return false;
    let n = 0;
    for (const s of base) n += Array.from(s.t).length;
    return n + 2 + Array.from(this.message.text).length > this.width;
  }

  /** A message too long for the status bar (a written file's path, an error), whole and wrapped. */
  protected messagePopup(): Overlay | null {
    const msg = this.message;
    if (!msg || !this.messageTooLong(this.statusBase())) return null;
    const w = Math.max(20, this.width - 6);
    return {
      title: msg.tone === 'error' ? 'Error' : 'Done',
      lines: [
        ...wrapWords(msg.text, w).map((t): Line => [{ t, ...(msg.tone === 'error' ? { s: 'error' } : {}) }]),
        [],
        [{ t: 'any key closes', s: 'dim' }],
      ],
      tone: msg.tone,
    };
  }

  /** The status bar of `tui -i`: what is being captured where, and the backend's drop count. */
  private liveStatus(live: NonNullable<CaptureModel['source']['live']>): Span[] {
    const m = this.model;
    const d = live.stats().dropped;
    const where =
      m.state === 'reading'
        ? ` capturing on ${live.iface}`
        : ` capture on ${live.iface} ${m.state === 'failed' ? 'failed' : 'stopped'}`;
    const spans: Span[] = [
      { t: where, s: 'bold' },
      { t: `  ${plural(m.packets, 'packet')}  ${plural(m.flows.length, 'flow')}  ${plural(m.fpdus, 'FPDU')}  ` },
      { t: plural(m.errors, 'error'), ...(m.errors ? { s: 'error' as StyleName } : {}) },
      { t: '  ' },
      { t: plural(m.warnings, 'warning'), ...(m.warnings ? { s: 'warning' as StyleName } : {}) },
      { t: '  ' },
      d === null ? { t: 'drops n/a', s: 'dim' } : { t: `${d} dropped`, ...(d ? { s: 'error' as StyleName } : {}) },
      { t: this.filterText ? `  filter: ${this.filterText}` : '  no filter' },
    ];
    return spans;
  }

  /** A screen over everything: help, or why there is nothing to browse. */
  overlay(): Overlay | null {
    if (this.showHelp) return helpOverlay(this.width, this.height, this.helpTop);
    const n = this.notice();
    return n ? fitOverlay(n, this.width) : this.messagePopup();
  }

  protected notice(): Overlay | null {
    return noticeOverlay(this.model, this.noticeDismissed);
  }
}

/**
 * The status bar: the counts, filter and message, then "? help  q quit" when there is room for
 * it; a bar too long for the screen is cut with "…" so it is seen to go on.
 */
const PANE_NAMES: Readonly<Record<PaneId, string>> = {
  flows: 'Flows',
  pdus: 'PDUs',
  findings: 'Findings',
  tree: 'Detail',
  bytes: 'Bytes',
};

/** Columns of the flow table other than the endpoints and Upper: Stream to Bytes, and Rev to IRD/ORD. */
const FLOW_FIXED = 6 + 1 + 1 + 9 + 1 + 4 + 1 + 4 + 1 + 13 + 1 + 10 + 1 + 1 + 3 + 1 + 3 + 1 + 1 + 1 + 3 + 1 + 3 + 1 + 11;
/** Upper is never narrower than this: room for "SMB Direct" or "NVMe/RDMA" with the detail columns cut. */
const UPPER_MIN = 12;

/** The flow's upper layer in `w` columns: the whole text when it fits, else its name alone ("SMB Direct"). */
function upperLabel(text: string | null | undefined, w: number): string {
  if (!text) return '-';
  if (Array.from(text).length <= w) return text;
  const name = /^[^:(]+/.exec(text)?.[0].trim() ?? text;
  return name;
}

/** A notice's lines within the screen: one-span lines wrapped at spaces, others cut with "…". */
function fitOverlay(o: Overlay, width: number): Overlay {
  const w = Math.max(20, width - 6);
  const lines: Line[] = [];
  for (const l of o.lines) {
    if (l.length === 1) for (const t of wrapWords(l[0]!.t, w)) lines.push([{ ...l[0]!, t }]);
    else lines.push(clip(l, w));
  }
  return { ...o, lines };
}

const STATUS_TAIL: Span = { t: '  ? help  q quit', s: 'dim' };

function statusLine(spans: Span[], w: number): Line {
  let n = 0;
  for (const s of spans) n += Array.from(s.t).length;
  return n + STATUS_TAIL.t.length <= w ? [...spans, STATUS_TAIL] : clip(spans, w);
}

/**
 * The flow list's MPA column: how MPA was found, with the RFC 5044 Appendix C outcome for an RDMA
 * Consortium (Rev 0) peer and "pre-std" for MPA enabled without startup frames.
 */
function mpaLabel(f: FlowRow): string | null {
  if (f.rdmac) return f.rdmac === 'v0' ? 'RDMAC v0' : 'RDMAC cls';
  if (f.detection === 'prestandard') return 'pre-std';
  return f.detection;
}
