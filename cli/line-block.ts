/**
 * The text output's lines gathered into blocks: written every `maxLines` lines (and on flush()),
 * as one write. Where the output takes bytes (RunIo.outBytes), each line is encoded straight into
 * one reused block of UTF-8, instead of joining the lines into a string and encoding that into a
 * new buffer: -V -x makes tens of MB of text, and the join, its copy and the buffer per block were
 * a third of such a run. Written octets are the same as the strings' UTF-8 (a line never splits a
 * character: each is whole, and the encoding of a line does not depend on its neighbours). A line
 * may also come as its UTF-8 octets (a group of -V -x lines waiting for its turn: cli/run.ts).
 */
import type { RunIo } from './output.js';

/** UTF-8 takes at most 3 octets per UTF-16 code unit (a surrogate pair: 4 for 2). */
const MAX_UTF8_PER_UNIT = 3;
/** A LineBlock's first block. */
const FIRST_BLOCK = 64 * 1024;

export class LineBlock {
  private readonly strings: string[] = [];
  private block: Buffer | null;
  private used = 0;
  private lines = 0;

  /**
   * The block starts at 64 KiB (or `blockBytes`, if smaller) and doubles, up to `blockBytes`, each
   * time it fills before its lines are out: a run over hundreds of small captures makes a block
   * per capture, and a 1 MiB one each was a garbage collection every few dozen captures.
   */
  constructor(
    private readonly io: RunIo,
    private readonly maxLines = 256,
    private readonly blockBytes = 1 << 20,
  ) {
    this.block = io.outBytes ? Buffer.allocUnsafe(Math.min(FIRST_BLOCK, blockBytes)) : null;
  }

  /** Whether line() may be given octets (UTF-8) instead of a string. */
  get takesBytes(): boolean {
    return this.block !== null;
  }

  /** A line (without its newline): a string, or its UTF-8 octets when takesBytes. */
  line(s: string | Uint8Array): void {
    const bytes = typeof s !== 'string';
    if (this.block === null) {
      if (bytes) throw new Error('internal: octets given to a LineBlock that writes strings');
      this.strings.push(s);
    } else {
      // The most octets the line takes with its newline; the lines held go out first when it does
      // not fit (so the output keeps its order), and one larger than any block goes out alone.
      const need = bytes ? s.length + 1 : (s.length + 1) * MAX_UTF8_PER_UNIT;
      if (need > this.block.length - this.used) this.grow(need);
      const b = this.block;
      if (need > b.length) {
        if (bytes) {
          this.io.outBytes!(s);
          b[this.used++] = 0x0a;
        } else this.io.out(`${s}\n`);
      } else {
        if (bytes) {
          b.set(s, this.used);
          this.used += s.length;
        } else this.used += b.write(s, this.used, 'utf8');
        b[this.used++] = 0x0a;
      }
    }
    if (++this.lines >= this.maxLines) this.flush();
  }

  /** Writes what is held. */
  flush(): void {
    this.lines = 0;
    if (this.block !== null) this.writeBlock();
    else if (this.strings.length) {
      this.io.out(`${this.strings.join('\n')}\n`);
      this.strings.length = 0;
    }
  }

  /** Writes the lines held, and takes a larger block while there is room to grow toward `need`. */
  private grow(need: number): void {
    this.writeBlock();
    const now = this.block!.length;
    if (now < this.blockBytes) this.block = Buffer.allocUnsafe(Math.min(this.blockBytes, Math.max(now * 2, need)));
  }

  private writeBlock(): void {
    if (this.used === 0) return;
    const n = this.used;
    this.used = 0;
    // A view, written synchronously before the block is filled again.
    this.io.outBytes!(this.block!.subarray(0, n));
  }
}

/** A slab's size: groups are encoded one after another into it, and a new one taken when full. */
const SLAB_BYTES = 256 * 1024;

/**
 * Lines encoded as one block of UTF-8 (joined by newlines, no final one), each view cut from a
 * shared slab: a group of -V -x lines waiting for its turn costs no string of the whole group
 * (whose one arrow made all of it two-byte) and no 8 KiB pool of its own every few groups. A view
 * keeps its slab alive until it is written; a slab is never written to again once given up.
 */
export class Utf8Slab {
  /** Taken at the first group (a run that shows none allocates nothing). */
  private slab = Buffer.alloc(0);
  private at = 0;

  encodeLines(lines: readonly string[]): Uint8Array {
    let max = lines.length;
    for (const l of lines) max += l.length * MAX_UTF8_PER_UNIT;
    if (max > this.slab.length - this.at) {
      this.slab = Buffer.allocUnsafe(Math.max(SLAB_BYTES, max));
      this.at = 0;
    }
    const s = this.slab;
    const start = this.at;
    let at = start;
    // The first line (the event line, whose arrow makes it two-byte) alone, then the others joined:
    // one-byte text encodes fastest in one piece. Any cut at line ends gives the same octets.
    if (lines.length > 0) at += s.write(lines[0]!, at, 'utf8');
    if (lines.length > 1) {
      s[at++] = 0x0a;
      at += s.write(lines.length === 2 ? lines[1]! : lines.slice(1).join('\n'), at, 'utf8');
    }
    this.at = at;
    return s.subarray(start, at);
  }
}
