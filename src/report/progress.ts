/**
 * A one-line progress bar on stderr for long runs. The caller decides whether it is wanted (a
 * terminal, not CI); it redraws at most ten times a second and erases itself at the end.
 */

const REDRAW_MS = 100;
const CHECK_EVERY = 1024;
const WIDTH = 30;

function size(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)} GB`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} MB`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(0)} kB`;
  return `${n} B`;
}

export class Progress {
  private n = 0;
  private last = 0;
  private drawn = false;
  private readonly started = Date.now();

  /** total: the file size in bytes, or null when reading a stream of unknown length. */
  constructor(
    private readonly write: (s: string) => void,
    private readonly total: number | null,
  ) {}

  /** Called per packet with its byte offset in the capture. Cheap: looks at the clock every 1024 packets. */
  tick(offset: number, frame: number): void {
    if (++this.n % CHECK_EVERY !== 0) return;
    const now = Date.now();
    if (now - this.last < REDRAW_MS) return;
    this.last = now;
    this.draw(offset, frame, now);
  }

  private draw(offset: number, frame: number, now: number): void {
    const secs = Math.max(0.001, (now - this.started) / 1000);
    const rate = `${size(offset / secs)}/s`;
    let line: string;
    if (this.total && this.total > 0) {
      const f = Math.min(1, offset / this.total);
      const done = Math.round(f * WIDTH);
      line = `[${'#'.repeat(done)}${'.'.repeat(WIDTH - done)}] ${(f * 100).toFixed(0).padStart(3)}%  ${frame} packets  ${size(offset)} of ${size(this.total)}  ${rate}`;
    } else {
      line = `${frame} packets  ${size(offset)}  ${rate}`;
    }
    this.write(`\r${line}\x1b[K`);
    this.drawn = true;
  }

  /** Erases the bar (call before anything else is written to the same terminal). */
  done(): void {
    if (this.drawn) this.write('\r\x1b[K');
    this.drawn = false;
  }
}

/**
 * The progress line of a run over several captures: how many are done of how many, and their
 * octets of the total; redrawn when a capture finishes. Its owner erases it (done()) before
 * writing anything else to the same terminal, and may draw it again after.
 */
export class CapturesProgress {
  private finished = 0;
  private bytesDone = 0;
  private drawn = false;

  constructor(
    private readonly write: (s: string) => void,
    private readonly captures: number,
    /** Octets of all captures, when every one is a file of known size, else null. */
    private readonly totalBytes: number | null,
  ) {}

  /** A capture finished; `bytes` its size (0 when unknown). */
  finish(bytes: number): void {
    this.finished++;
    this.bytesDone += bytes;
  }

  draw(): void {
    if (this.finished >= this.captures) return;
    const f = this.totalBytes ? Math.min(1, this.bytesDone / this.totalBytes) : this.finished / this.captures;
    const done = Math.round(f * WIDTH);
    const bytes = this.totalBytes ? `  ${size(this.bytesDone)} of ${size(this.totalBytes)}` : '';
    this.write(
      `\r[${'#'.repeat(done)}${'.'.repeat(WIDTH - done)}] ${this.finished} of ${this.captures} captures${bytes}\x1b[K`,
    );
    this.drawn = true;
  }

  done(): void {
    if (this.drawn) this.write('\r\x1b[K');
    this.drawn = false;
  }
}
