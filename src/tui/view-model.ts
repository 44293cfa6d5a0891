/**
 * The terminal UI as plain state: which pane has the focus, what is selected and scrolled where,
 * the display filter, and what every pane shows (styled lines). Keys and mouse clicks come in as
 * names, lines go out; no terminal here, so the whole behaviour is tested without one and the
 * blessed layer (src/tui/blessed-screen.ts) only draws.
 *
 * In layers, one file each: view-state.ts holds the state and follows the model, view-panes.ts
 * renders it, and this file is the input side (keys, mouse, the filter and write prompts).
 */
import { basename } from 'node:path';
import { compileEventFilter } from '../report/fields.js';
import { FilterError, formatFilterError, type CompiledFilter } from '../report/filter/filter.js';
import { FrameExport } from '../report/pcap-export.js';
import { clip, type Line, type Span } from './lines.js';
import { KIND_FINDING, KIND_REPLY, KIND_REQUEST, V_ERROR, V_INFO, V_WARNING } from './pdu-index.js';
import { ViewPanes } from './view-panes.js';
import type { CaptureModel } from './capture-model.js';
import { completeField } from './field-complete.js';
import { FilterHistory } from './filter-history.js';
import { helpLines, helpRows } from './overlays.js';
import { PROMPT_MAX, PromptLine } from './prompt-line.js';
import { ALL, scrollTo } from './view-state.js';
import { requestRowsShown } from './requests-pane.js';
import { PANES, type Action, type FlowSort, type PaneId, type Prompt } from './view-types.js';

export {
  PANES,
  type Action,
  type FlowSort,
  type Overlay,
  type PaneId,
  type PaneView,
  type Prompt,
  type Rect,
} from './view-types.js';

const SORTS: readonly FlowSort[] = ['first frame', 'errors', 'bytes'];

export class ViewModel extends ViewPanes {
  /** The prompt open (display filter or pcap path being typed), and the error lines under it. */
  private editing: PromptLine | null = null;
  /** Names offered by the last Tab, shown under the prompt until the next key. */
  private completions: readonly string[] = [];

  /** `history`: the filter prompt's Up/Down (kept across runs when it has a file). */
  constructor(
    model: CaptureModel,
    readonly history = new FilterHistory(),
  ) {
    super(model);
  }
  private editError: Line[] = [];

  // ------------------------------------------------------------------------------------------
  // Keys
  // ------------------------------------------------------------------------------------------

  /** Handles one key: `full` is the key's name (blessed's key.full: "up", "S-tab", "C-c", "enter"), `ch` the character typed. */
  key(full: string, ch?: string): Action {
    if (full === 'C-c') return 'quit';
    // Esc and the key after it read together (a busy moment, or typed fast) arrive as one Meta key,
    // the terminal's ESC prefix. No key here is a Meta one: take them as Esc, then that key.
    if (full.startsWith('M-') && full.length > 2) {
      const first = this.key('escape');
      if (first === 'quit') return first;
      const rest = full.slice(2);
      const then = this.key(rest, rest.length === 1 ? rest : undefined);
      return then === 'none' ? first : then;
    }
    if (this.editing) return this.editKey(full, ch);
    if (this.showHelp) return this.helpKey(full, ch ?? '');
    const notice = this.notice();
    if (notice && full !== 'q') {
      if (this.model.state !== 'failed') this.noticeDismissed = true;
      return 'redraw';
    }
    // A message too long for the status bar is a popup: the key only closes it (q still quits).
    if (this.messagePopup() && full !== 'q') {
      this.message = null;
      return 'redraw';
    }
    this.message = null;
    const c = ch ?? '';
    switch (true) {
      case full === 'q':
        return 'quit';
      case c === '?':
        this.showHelp = true;
        this.helpTop = 0;
        return 'redraw';
      case full === 'tab':
        this.focus = PANES[(PANES.indexOf(this.focus) + 1) % PANES.length]!;
        return 'redraw';
      case full === 'S-tab':
        this.focus = PANES[(PANES.indexOf(this.focus) + PANES.length - 1) % PANES.length]!;
        return 'redraw';
      case c === '/':
        this.editing = new PromptLine('filter', this.filterText);
        this.history.reset();
        this.editError = [];
        return 'redraw';
      case c === 'w':
        this.editing = new PromptLine('write', this.defaultWriteName());
        this.editError = [];
        return 'redraw';
      case c === 'n':
        this.jumpFinding(1);
        return 'redraw';
      case c === 'N':
        this.jumpFinding(-1);
        return 'redraw';
      case c === 'e':
        this.errorsOnly = !this.errorsOnly;
        this.rescan(this.current?.item ?? null);
        return 'redraw';
      case c === 'f':
        this.follow = !this.follow;
        if (this.follow) this.selectPdu(this.visible.length - 1);
        return 'redraw';
      case c === 's':
        this.sort = SORTS[(SORTS.indexOf(this.sort) + 1) % SORTS.length]!;
        this.refreshFlows();
        this.selectFlowRow(this.flowSel);
        return 'redraw';
      case c === 'c':
        this.captureFindings = !this.captureFindings;
        this.ladder = false;
        this.requests = false;
        this.findSel = 0;
        this.findTop = 0;
        return 'redraw';
      case c === 'l':
        this.ladder = !this.ladder;
        this.requests = false;
        return 'redraw';
      case c === 'r':
        this.requests = !this.requests;
        this.ladder = false;
        if (this.requests) this.focus = 'findings';
        this.clampAll();
        return 'redraw';
    }
    return this.paneKey(full, c);
  }

  /** Keys over the help: the arrows and pages scroll it, q quits, any other key closes it. */
  private helpKey(full: string, c: string): Action {
    const rows = helpRows(this.height);
    const max = Math.max(0, helpLines(this.width).length - rows);
    const step =
      full === 'up' || c === 'k'
        ? -1
        : full === 'down' || c === 'j'
          ? 1
          : full === 'pageup'
            ? -rows
            : full === 'pagedown' || full === 'space' || c === ' '
              ? rows
              : full === 'home' || c === 'g'
                ? -Infinity
                : full === 'end' || c === 'G'
                  ? Infinity
                  : 0;
    if (step !== 0) {
      this.helpTop = Math.max(0, Math.min(max, this.helpTop + step));
      return 'redraw';
    }
    this.showHelp = false;
    return full === 'q' ? 'quit' : 'redraw';
  }

  private paneKey(full: string, c: string): Action {
    const page = Math.max(1, this.inner(this.focus).h - 2);
    const delta =
      full === 'up' || c === 'k'
        ? -1
        : full === 'down' || c === 'j'
          ? 1
          : full === 'pageup'
            ? -page
            : full === 'pagedown'
              ? page
              : full === 'home' || c === 'g'
                ? -Infinity
                : full === 'end' || c === 'G' || full === 'S-g'
                  ? Infinity
                  : 0;
    const enter = full === 'enter' || full === 'return';
    if (delta !== 0) {
      this.move(this.focus, delta);
      return 'redraw';
    }
    switch (this.focus) {
      case 'flows':
        if (enter) {
          this.focus = 'pdus';
          return 'redraw';
        }
        break;
      case 'pdus':
        if (enter) {
          this.focus = 'tree';
          return 'redraw';
        }
        break;
      case 'tree': {
        const rows = this.treeRows();
        const r = rows[this.treeSel];
        if (!r) break;
        const has = (r.node.children?.length ?? 0) > 0;
        if ((enter || full === 'space' || c === ' ') && has) {
          if (this.collapsed.has(r.path)) this.collapsed.delete(r.path);
          else this.collapsed.add(r.path);
          return 'redraw';
        }
        if (full === 'right' && has) {
          this.collapsed.delete(r.path);
          return 'redraw';
        }
        if (full === 'left') {
          if (has && !this.collapsed.has(r.path)) this.collapsed.add(r.path);
          else {
            const parent = r.path.slice(0, r.path.lastIndexOf('/'));
            const at = rows.findIndex((x) => x.path === parent);
            if (at >= 0) this.treeSel = at;
          }
          this.clampAll();
          this.revealField();
          return 'redraw';
        }
        break;
      }
      case 'findings':
        if (enter && this.requests) {
          this.openRequest();
          return 'redraw';
        }
        if (enter && !this.ladder) {
          this.openFinding();
          return 'redraw';
        }
        break;
      case 'bytes':
        break;
    }
    return 'none';
  }

  /** Moves the focused pane's selection (or scroll, for the bytes pane) by `delta` rows. */
  move(pane: PaneId, delta: number): void {
    const to = (cur: number, n: number): number =>
      delta === -Infinity ? 0 : delta === Infinity ? n - 1 : Math.max(0, Math.min(n - 1, cur + delta));
    switch (pane) {
      case 'flows':
        this.selectFlowRow(to(this.flowSel, this.flowOrder.length + 1));
        break;
      case 'pdus':
        // Moving anywhere but to the end leaves follow mode.
        if (delta !== Infinity) this.follow = false;
        this.selectPdu(to(this.pduSel, this.visible.length));
        break;
      case 'tree':
        this.treeSel = to(this.treeSel, this.treeRows().length);
        this.treeTop = scrollTo(this.treeTop, this.treeSel, this.inner('tree').h);
        this.revealField();
        break;
      case 'bytes': {
        const n = this.bytesPaneLines().length;
        this.bytesTop = to(this.bytesTop, Math.max(1, n - this.inner('bytes').h + 1));
        break;
      }
      case 'findings':
        if (this.requests) {
          this.reqSel = to(this.reqSel, this.requestRows.get().length);
          this.reqTop = scrollTo(this.reqTop, this.reqSel, requestRowsShown(this.inner('findings').h));
          break;
        }
        if (this.ladder) break;
        this.findSel = to(this.findSel, this.findingList().length);
        this.findTop = scrollTo(this.findTop, this.findSel, this.inner('findings').h);
        break;
    }
  }

  /** A click on row `row` (0-based, inside the border) of a pane: focus it and select the row. */
  click(pane: PaneId, row: number): Action {
    this.focus = pane;
    switch (pane) {
      case 'flows':
        if (row >= 1) this.selectFlowRow(this.flowTop + row - 1);
        break;
      case 'pdus':
        if (row >= 1) this.selectPdu(this.pduTop + row - 1);
        break;
      case 'tree': {
        const n = this.treeRows().length;
        if (this.treeTop + row < n) this.treeSel = this.treeTop + row;
        this.revealField();
        break;
      }
      case 'findings':
        if (this.requests) {
          if (
            row >= 1 &&
            this.reqTop + row - 1 <
              Math.min(this.requestRows.get().length, this.reqTop + requestRowsShown(this.inner('findings').h))
          )
            this.reqSel = this.reqTop + row - 1;
        } else if (!this.ladder && this.findTop + row < this.findingList().length) this.findSel = this.findTop + row;
        break;
      case 'bytes':
        break;
    }
    return 'redraw';
  }

  /** Mouse wheel: scroll the pane under the pointer. */
  wheel(pane: PaneId, delta: number): Action {
    this.move(pane, delta);
    return 'redraw';
  }

  private jumpFinding(step: 1 | -1): void {
    const ix = this.model.index;
    const has = V_ERROR | V_WARNING | V_INFO;
    for (let k = this.pduSel + step; k >= 0 && k < this.visible.length; k += step) {
      if (ix.verdict[this.visible.get(k)]! & has) {
        this.focus = 'pdus';
        this.selectPdu(k);
        return;
      }
    }
    this.message = {
      text: step > 0 ? 'no further PDU with a finding' : 'no earlier PDU with a finding',
      tone: 'normal',
    };
  }

  private openFinding(): void {
    const list = this.findingList();
    const k = list[this.findSel];
    if (k === undefined) return;
    this.jumpTo(this.model.findingItem.get(k));
  }

  /** Enter in the requests view: the PDU that completed the selected request's message. */
  private openRequest(): void {
    const r = this.requestRows.get()[this.reqSel];
    if (!r) return;
    const item = r.requestFrame === null ? -1 : this.model.itemCompletingIn(r.requestFrame, r.command);
    if (item < 0) {
      this.message = { text: `frame ${r.requestFrame ?? '?'} carries no PDU listed`, tone: 'error' };
      return;
    }
    this.jumpTo(item);
  }

  /** Selects item `item` in the PDU list (switching to its flow if needed) and focuses the list. */
  private jumpTo(item: number): void {
    let at = this.positionOf(item);
    if (at < 0 && this.selectedFlow !== ALL && this.model.index.flow[item] !== this.selectedFlow) {
      this.selectFlowRow([ALL, ...this.flowOrder].indexOf(this.model.index.flow[item]!));
      at = this.positionOf(item);
    }
    if (at < 0) {
      this.message = { text: 'that PDU is hidden by the filter or errors-only; clear them to see it', tone: 'error' };
      return;
    }
    this.focus = 'pdus';
    this.selectPdu(at);
  }

  // ------------------------------------------------------------------------------------------
  // Prompt (filter, write)
  // ------------------------------------------------------------------------------------------

  prompt(): Prompt | null {
    const e = this.editing;
    if (!e) return null;
    const label = e.kind === 'filter' ? 'Display filter: ' : 'Write pcap to: ';
    const hint: Line =
      e.kind === 'filter'
        ? [{ t: 'Enter applies, an empty filter clears, Esc cancels; e.g. iwarp_mpa.crc_status == "bad"', s: 'dim' }]
        : [{ t: this.writeWhat(), s: 'dim' }];
    const note: Line[] = e.dropped
      ? [[{ t: `the prompt holds at most ${PROMPT_MAX} characters: ${e.dropped} more were not taken`, s: 'error' }]]
      : [];
    if (e.selected) note.push([{ t: 'typing replaces the text offered; → or End keeps it to edit', s: 'dim' }]);
    if (this.completions.length) note.push(completionLine(this.completions, this.width - 2));
    note.push(...(this.editError.length && !e.checkDue ? this.editError : [hint]));
    // The cursor block takes one column; the prompt's border two.
    const shown = e.shown(Math.max(1, this.width - 3 - label.length));
    return { label, text: e.text, shown, selected: e.selected, note: note.map((l) => clip(l, this.width - 2)) };
  }

  /** True when typed text waits for the filter check (the screen runs checkPrompt once typing pauses). */
  promptCheckDue(): boolean {
    return this.editing?.checkDue === true;
  }

  /**
   * Checks the filter typed so far and sets the caret message. Not run per key: a paste would
   * compile the growing filter once per character (issue 26); the screen calls this when typing pauses.
   */
  checkPrompt(): void {
    const e = this.editing;
    if (!e?.checkDue) return;
    e.checkDue = false;
    this.editError = e.kind === 'filter' ? this.checkFilter(e.text).lines : [];
  }

  private editKey(full: string, ch: string | undefined): Action {
    const e = this.editing!;
    if (full === 'escape') {
      this.editing = null;
      this.editError = [];
      return 'redraw';
    }
    if (full === 'enter' || full === 'return') {
      if (e.kind === 'write') this.writePcap(e.text);
      else if (this.applyFilter(e.text)) this.history.add(e.text);
      return 'redraw';
    }
    this.completions = [];
    if (e.kind === 'filter' && (full === 'up' || full === 'down')) {
      const t = this.history.walk(full === 'up' ? -1 : 1, e.text);
      if (t === null) return 'none';
      e.set(t);
      return 'redraw';
    }
    if (e.kind === 'filter' && full === 'tab') {
      const c = completeField(e.selected ? '' : e.text);
      if (!c) return 'none';
      e.set(c.text);
      if (c.candidates.length > 1) this.completions = c.candidates;
      return 'redraw';
    }
    if (full === 'backspace') e.backspace();
    else if (full === 'C-u') e.clear();
    else if ((full === 'right' || full === 'end') && e.selected) e.keep();
    else if (ch !== undefined && ch.length > 0 && !/[\u0000-\u001f\u007f]/.test(ch)) {
      e.insert(ch);
    } else return 'none';
    return 'redraw';
  }

  private checkFilter(text: string): { compiled: CompiledFilter | null; lines: Line[] } {
    if (text.trim() === '') return { compiled: null, lines: [] };
    try {
      return { compiled: compileEventFilter(text), lines: [] };
    } catch (err) {
      if (!(err instanceof FilterError)) throw err;
      const msg = formatFilterError(text, err).split('\n');
      const lines: Line[] = msg.map((l, k) => [{ t: l, s: k === 0 ? 'error' : k === 2 ? 'error' : undefined } as Span]);
      if (/is neither a field nor a protocol name/.test(err.message))
        lines.push([{ t: '(mpa-dissect fields lists the field names)', s: 'dim' }]);
      return { compiled: null, lines };
    }
  }

  /** Sets the display filter; on a bad filter the prompt stays open with the caret message. Returns true when applied. */
  applyFilter(text: string): boolean {
    const got = this.checkFilter(text);
    if (got.lines.length) {
      this.editing = new PromptLine('filter', text, false);
      this.editError = got.lines;
      return false;
    }
    this.editing = null;
    this.editError = [];
    this.setFilter(got.compiled, text);
    return true;
  }

  /** The filter error lines currently shown (the caret message), if any. */
  filterError(): string[] {
    return this.editError.map((l) => l.map((s) => s.t).join(''));
  }

  private defaultWriteName(): string {
    const base = basename(this.model.source.label).replace(/\.(pcapng|pcap|cap)$/i, '') || 'capture';
    if (this.focus === 'flows' && this.selectedFlow !== ALL) return `${base}-stream${this.selectedFlow - 1}.pcap`;
    return `${base}-${this.filter || this.errorsOnly ? 'filtered' : 'pdus'}.pcap`;
  }

  private writeWhat(): string {
    if (this.focus === 'flows' && this.selectedFlow !== ALL)
      return `every frame of the MPA records of tcp.stream ${this.selectedFlow - 1} (Enter writes, Esc cancels)`;
    return `the frames of the ${this.visible.length} PDUs listed, with each flow's Request and Reply (Enter writes, Esc cancels)`;
  }

  /** Writes the selected flow, or the PDUs listed, with the -w writer. */
  writePcap(path: string): boolean {
    this.editing = null;
    this.editError = [];
    if (path.trim() === '') return false;
    const m = this.model;
    const ix = m.index;
    const exp = new FrameExport(m.source.frames, !m.source.randomAccess);
    const items: number[] = [];
    if (this.focus === 'flows' && this.selectedFlow !== ALL) {
      const fl = m.flow(this.selectedFlow)!;
      for (let k = 0; k < fl.items.length; k++) items.push(fl.items.get(k));
    } else for (const i of this.visibleItems()) items.push(i); // a loop: a million items overflow a spread's stack
    for (let k = 0; k < ix.count; k++) {
      if (ix.kind[k] === KIND_REQUEST || ix.kind[k] === KIND_REPLY) exp.noteStartup(ix.flow[k]!, ix.framesOf(k));
    }
    for (const i of items)
      exp.select(ix.kind[i] === KIND_FINDING && ix.flow[i] === 0 ? null : ix.flow[i]!, ix.framesOf(i));
    try {
      const res = exp.write(path);
      const notes = [
        res.missing ? `${res.missing} frames no longer available` : '',
        res.otherLinkType ? `${res.otherLinkType} frames of another link type left out` : '',
      ].filter((x) => x);
      this.message = {
        text: `wrote ${res.written} frames to ${path}${notes.length ? ` (${notes.join('; ')})` : ''}`,
        tone: 'normal',
      };
      return true;
    } catch (err) {
      this.message = {
        text: `cannot write ${path}: ${err instanceof Error ? err.message : String(err)}`,
        tone: 'error',
      };
      return false;
    }
  }
}

/** The names a Tab found, as many as fit one line, then how many more. */
function completionLine(names: readonly string[], w: number): Line {
  let t = '';
  let k = 0;
  for (; k < names.length; k++) {
    const more = names.length - k - 1;
    const next = (t ? `${t}  ` : '') + names[k];
    if (Array.from(next).length + (more ? ` … ${more} more`.length : 0) > w) break;
    t = next;
  }
  if (k < names.length) t += `${t ? ' ' : ''}… ${names.length - k} more`;
  return [{ t, s: 'dim' }];
}
