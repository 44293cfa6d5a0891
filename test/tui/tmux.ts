/**
 * Drives the real TUI in a real terminal: a detached tmux session on its own server socket, keys
 * sent with send-keys, the screen read back with capture-pane. Waits poll with a bound, never a
 * fixed sleep.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export { HAVE_TMUX } from '../helpers/tools.js';

let serial = 0;

export class Tmux {
  readonly socket = `mpa-tui-${process.pid}-${++serial}`;

  private tmux(...args: string[]): string {
    return execFileSync('tmux', ['-L', this.socket, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  }

  /** Starts `command` (a shell command line) in a `width`x`height` terminal; "EXIT=n" is printed when it ends. */
  /**
   * The UI's state directory (the filter history): a fresh one per session unless a test gives
   * its own, so no test reads or writes the user's ~/.local/state.
   */
  stateHome = mkdtempSync(join(tmpdir(), 'mpa-tui-state-'));

  start(command: string, width = 120, height = 40, cwd?: string): void {
    const env = ['-e', 'LANG=C.UTF-8', '-e', 'NO_COLOR=', '-e', `XDG_STATE_HOME=${this.stateHome}`];
    // The shell stays after the command so the screen it left behind (and its exit status) can be read.
    const line = `${command}; echo "EXIT=$?"; sleep 600`;
    execFileSync(
      'tmux',
      [
        '-L',
        this.socket,
        '-f',
        '/dev/null',
        'new-session',
        '-d',
        ...env,
        '-x',
        String(width),
        '-y',
        String(height),
        ...(cwd ? ['-c', cwd] : []),
        line,
      ],
      { stdio: 'ignore' },
    );
  }

  keys(...k: string[]): void {
    this.tmux('send-keys', '-t', '0', ...k);
  }

  /** Types text literally (no key names). */
  text(s: string): void {
    this.tmux('send-keys', '-t', '0', '-l', s);
  }

  /** Pastes `s` as a terminal paste arrives: one burst through tmux's buffer (load-buffer, paste-buffer). */
  paste(s: string): void {
    const dir = mkdtempSync(join(tmpdir(), 'mpa-tui-paste-'));
    try {
      const f = join(dir, 'paste.txt');
      writeFileSync(f, s);
      this.tmux('load-buffer', f);
      this.tmux('paste-buffer', '-t', '0');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  /** The pid of the command the pane's shell runs (the TUI), for sending it signals. */
  childPid(): number {
    const shell = this.format('#{pane_pid}');
    const out = spawnSync('pgrep', ['-P', shell], { encoding: 'utf8' }).stdout.trim().split('\n')[0] ?? '';
    const pid = Number(out);
    if (!Number.isInteger(pid) || pid <= 0) throw new Error(`no child of the pane's shell ${shell}`);
    return pid;
  }

  screen(escapes = false): string {
    return this.tmux('capture-pane', '-p', ...(escapes ? ['-e'] : []), '-t', '0');
  }

  /** A tmux format of the pane, e.g. "#{alternate_on}". */
  format(f: string): string {
    return this.tmux('display-message', '-p', '-t', '0', f).trim();
  }

  resize(width: number, height: number): void {
    this.tmux('resize-window', '-t', '0', '-x', String(width), '-y', String(height));
  }

  /** Polls the screen until `pred` holds; throws with the last screen after `ms`. */
  async waitFor(pred: (screen: string) => boolean, ms = 20_000, escapes = false): Promise<string> {
    const end = Date.now() + ms;
    let last = '';
    for (;;) {
      try {
        last = this.screen(escapes);
        if (pred(last)) return last;
      } catch {
        // the session may not be up yet
      }
      if (Date.now() > end) throw new Error(`timed out waiting; last screen:\n${last}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  kill(): void {
    spawnSync('tmux', ['-L', this.socket, 'kill-server'], { stdio: 'ignore' });
  }
}
