/**
 * The only module that knows blessed: draws what the view model says, passes keys, clicks, wheel
 * and resize back to it. A fork (neo-blessed, reblessed) replaces blessed here alone. The terminal
 * is given back (normal screen, cursor shown) on q, Ctrl-C, SIGTERM, SIGHUP, SIGINT and any exception.
 */
import blessed from 'blessed';
import type { Line, StyleName } from './lines.js';
import { PANES, type PaneId, type ViewModel } from './view-model.js';

const TAGS: Readonly<Record<StyleName, [string, string]>> = {
  error: ['{red-fg}', '{/red-fg}'],
  warning: ['{yellow-fg}', '{/yellow-fg}'],
  info: ['{cyan-fg}', '{/cyan-fg}'],
  dim: ['{gray-fg}', '{/gray-fg}'],
  bold: ['{bold}', '{/bold}'],
  head: ['{bold}{underline}', '{/underline}{/bold}'],
  length: ['{yellow-fg}', '{/yellow-fg}'],
  marker: ['{cyan-fg}', '{/cyan-fg}'],
  pad: ['{magenta-fg}', '{/magenta-fg}'],
  crc: ['{green-fg}', '{/green-fg}'],
  'crc-bad': ['{white-fg}{red-bg}', '{/red-bg}{/white-fg}'],
  key: ['{bold}', '{/bold}'],
  field: ['{black-fg}{white-bg}', '{/white-bg}{/black-fg}'],
  good: ['{green-fg}', '{/green-fg}'],
};

/** Quiet time after the last key before the filter typed is checked. */
const CHECK_PAUSE_MS = 150;

function tagged(l: Line, selected: boolean): string {
  let s = '';
  for (const span of l) {
    const t = blessed.escape(span.t);
    s += span.s ? TAGS[span.s][0] + t + TAGS[span.s][1] : t;
  }
  return selected ? `{inverse}${s}{/inverse}` : s;
}

/** Esc and a control character that blessed's key parser drops together (not Enter, LF, Backspace). */
const DROPPED_BY_BLESSED = /\x1b([\x00-\x07\x09\x0b\x0c\x0e-\x1a\x1c-\x1f])/g;

export class BlessedScreen {
  private readonly screen: blessed.Widgets.Screen;
  private readonly boxes = new Map<PaneId, blessed.Widgets.BoxElement>();
  private readonly status: blessed.Widgets.BoxElement;
  private readonly overlayBox: blessed.Widgets.BoxElement;
  private readonly promptBox: blessed.Widgets.BoxElement;
  private destroyed = false;
  private timer: NodeJS.Timeout | null = null;
  private scheduled = false;
  private resolveDone: ((code: number) => void) | null = null;
  /** Resolves with the exit status when the UI closes. */
  readonly done: Promise<number>;

  constructor(private readonly vm: ViewModel) {
    this.done = new Promise((res) => (this.resolveDone = res));
    // Borders in Unicode box characters rather than the VT100 line set: the UI prints Unicode
    // arrows anyway, and tmux or screen with an old termcap garble the line set (ncurses' knob).
    process.env['NCURSES_NO_UTF8_ACS'] ??= '1';
    this.screen = blessed.screen({
      smartCSR: true,
      fullUnicode: true,
      forceUnicode: true,
      autoPadding: false,
      title: 'mpa-dissect',
      warnings: false,
    });
    for (const id of PANES) {
      const box = blessed.box({
        parent: this.screen,
        tags: true,
        border: { type: 'line' },
        style: { border: { fg: 'gray' } },
        clickable: true,
        wrap: false,
      });
      box.on('click', (data: blessed.Widgets.Events.IMouseEventArg) =>
        this.guard(() => this.act(vm.click(id, data.y - (box.atop as number) - 1))),
      );
      box.on('wheelup', () => this.guard(() => this.act(vm.wheel(id, -3))));
      box.on('wheeldown', () => this.guard(() => this.act(vm.wheel(id, 3))));
      this.boxes.set(id, box);
    }
    this.status = blessed.box({
      parent: this.screen,
      tags: true,
      height: 1,
      bottom: 0,
      left: 0,
      width: '100%',
      style: { bg: 'blue', fg: 'white' },
    });
    this.promptBox = blessed.box({
      parent: this.screen,
      tags: true,
      border: { type: 'line' },
      left: 0,
      width: '100%',
      hidden: true,
      style: { border: { fg: 'cyan' } },
    });
    this.overlayBox = blessed.box({
      parent: this.screen,
      tags: true,
      border: { type: 'line' },
      top: 'center',
      left: 'center',
      hidden: true,
      style: { border: { fg: 'cyan' } },
    });
    this.screen.enableMouse();
    this.screen.on('keypress', (ch: string | undefined, key: blessed.Widgets.Events.IKeyEventArg | undefined) => {
      // blessed reports a carriage return twice, as "return" and then as "enter": take one.
      if (key?.full === 'return') return;
      this.guard(() => this.act(vm.key(key?.full ?? ch ?? '', ch)));
    });
    // blessed drops Esc followed by a control character when both come in one read (typed while
    // a paste was still being taken in): both keys were lost, Ctrl-C included, and the UI could not
    // be ended. They are delivered here, after blessed has taken the rest of the read.
    this.screen.program.input.on('data', (d: Buffer | string) => {
      // Most reads hold no Esc: they are not decoded a second time.
      if (typeof d === 'string' ? !d.includes('\x1b') : !d.includes(0x1b)) return;
      const s = typeof d === 'string' ? d : d.toString('latin1');
      for (const m of s.matchAll(DROPPED_BY_BLESSED)) {
        const c = m[1]!.charCodeAt(0);
        this.guard(() => {
          this.act(vm.key('escape', '\x1b'));
          if (c === 0x09) this.act(vm.key('tab', '\t'));
          else if (c >= 0x01 && c <= 0x1a) this.act(vm.key(`C-${String.fromCharCode(0x60 + c)}`, m[1]));
        });
      }
    });
    this.screen.on('resize', () => this.guard(() => this.render()));
    // Exit status 128 + signal number, as a shell reports a process killed by it.
    for (const [sig, code] of [
      ['SIGTERM', 143],
      ['SIGHUP', 129],
      ['SIGINT', 130],
    ] as const)
      process.once(sig, () => this.close(code));
    process.once('uncaughtException', (e) => this.fail(e));
    process.once('unhandledRejection', (e) => this.fail(e));
    // The model reads in the background; the list catches up in bounded slices (never > ~20 ms of work).
    this.timer = setInterval(() => this.guard(() => this.tick()), 100);
    vm.model.onChange(() => this.schedule());
    this.render();
  }

  private chasing = false;

  private tick(): void {
    const changed = this.vm.pump(20);
    if (changed || this.vm.model.state === 'reading' || this.vm.pending()) this.render();
    // A new filter over a big capture: keep evaluating in 40 ms slices, turning the event loop
    // between them (keys stay responsive), rather than 20 ms every 100 ms.
    if (this.vm.pending() && !this.chasing) {
      this.chasing = true;
      let last = Date.now();
      const step = (): void => {
        if (this.destroyed || !this.vm.pending()) {
          this.chasing = false;
          return;
        }
        this.guard(() => {
          this.vm.pump(40);
          if (Date.now() - last >= 100) {
            last = Date.now();
            this.render();
          }
        });
        // Waiting for a replay: look again shortly instead of spinning.
        if (this.vm.waiting()) setTimeout(step, 30);
        else setImmediate(step);
      };
      setImmediate(step);
    }
  }

  private schedule(): void {
    if (this.scheduled || this.destroyed) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.guard(() => {
        this.vm.pump(20);
        this.render();
      });
    });
  }

  /**
   * A key's redraw waits for the end of the keys that arrived together: a paste is thousands of
   * keypress events in one read, and drawing after each would cost a frame per character.
   */
  private act(a: 'none' | 'redraw' | 'quit'): void {
    if (a === 'quit') this.close(0);
    else if (a === 'redraw') this.renderSoon();
    if (this.vm.promptCheckDue()) this.checkSoon();
  }

  private renderPending = false;

  private renderSoon(): void {
    if (this.renderPending || this.destroyed) return;
    this.renderPending = true;
    setImmediate(() => {
      this.renderPending = false;
      this.guard(() => this.render());
    });
  }

  private checkTimer: NodeJS.Timeout | null = null;

  /** The filter typed is checked once typing pauses (CHECK_PAUSE_MS), never per key nor while drawing. */
  private checkSoon(): void {
    if (this.checkTimer) clearTimeout(this.checkTimer);
    this.checkTimer = setTimeout(() => {
      this.checkTimer = null;
      this.guard(() => {
        this.vm.checkPrompt();
        this.render();
      });
    }, CHECK_PAUSE_MS);
  }

  private guard(fn: () => void): void {
    if (this.destroyed) return;
    try {
      fn();
    } catch (e) {
      this.fail(e);
    }
  }

  private fail(e: unknown): void {
    this.close(2);
    process.stderr.write(`mpa-dissect tui: ${e instanceof Error ? e.message : String(e)}\n`);
    if (process.env['MPA_DISSECT_DEBUG'] && e instanceof Error) process.stderr.write(`${e.stack}\n`);
  }

  /** Gives the terminal back and resolves `done`. */
  close(code: number): void {
    if (this.destroyed) return;
    this.destroyed = true;
    if (this.timer) clearInterval(this.timer);
    if (this.checkTimer) clearTimeout(this.checkTimer);
    try {
      this.screen.destroy();
    } finally {
      // blessed leaves the cursor state to the program: make sure it is visible again.
      process.stdout.write('\x1b[?25h');
      this.resolveDone?.(code);
    }
  }

  render(): void {
    if (this.destroyed) return;
    const vm = this.vm;
    vm.resize(this.screen.width as number, this.screen.height as number);
    for (const p of vm.panes()) {
      const box = this.boxes.get(p.id)!;
      box.left = p.rect.left;
      box.top = p.rect.top;
      box.width = p.rect.width;
      box.height = p.rect.height;
      box.style.border.fg = p.focused ? 'cyan' : 'gray';
      box.setLabel({ text: ` ${blessed.escape(p.title)} `, side: 'left' });
      box.setContent(
        p.lines
          .map((l, k) => tagged(l, k === p.selected && (p.focused || p.id === 'pdus' || p.id === 'flows')))
          .join('\n'),
      );
    }
    this.status.setContent(tagged(vm.status(), false));
    const pr = vm.prompt();
    if (pr) {
      const h = pr.note.length + 3;
      this.promptBox.top = Math.max(0, (this.screen.height as number) - 1 - h);
      this.promptBox.height = h;
      this.promptBox.setContent(
        [
          `{bold}${blessed.escape(pr.label)}{/bold}${pr.selected ? `{inverse}${blessed.escape(pr.shown)}{/inverse}` : blessed.escape(pr.shown)}█`,
          ...pr.note.map((l) => tagged(l, false)),
        ].join('\n'),
      );
      this.promptBox.show();
      this.promptBox.setFront();
    } else this.promptBox.hide();
    const ov = vm.overlay();
    if (ov) {
      const w = Math.min(
        (this.screen.width as number) - 2,
        Math.max(40, ...ov.lines.map((l) => l.reduce((n, s) => n + s.t.length, 0) + 4)),
      );
      this.overlayBox.width = w;
      this.overlayBox.height = Math.min((this.screen.height as number) - 2, ov.lines.length + 2);
      this.overlayBox.style.border.fg = ov.tone === 'error' ? 'red' : 'cyan';
      this.overlayBox.setLabel({ text: ` ${blessed.escape(ov.title)} `, side: 'left' });
      this.overlayBox.setContent(ov.lines.map((l) => tagged(l, false)).join('\n'));
      this.overlayBox.show();
      this.overlayBox.setFront();
    } else this.overlayBox.hide();
    this.screen.render();
  }
}
