/**
 * Where the CLI's output goes, with back-pressure and honest errors.
 *
 * Standard output is written with write(2) directly, synchronously: process.stdout on a pipe is
 * asynchronous on Linux and queues everything a fast producer hands it (1.6 GB of -V -x for a 2 MB
 * capture). A synchronous write makes the analysis wait for the reader instead, so memory stays at
 * one block. When the descriptor is non-blocking (Node or the shell made it so) and the pipe is
 * full, write(2) says EAGAIN: we sleep a millisecond and try again.
 *
 * A failed write (ENOSPC on /dev/full, EIO, EBADF) becomes an OutputError naming the file: the
 * CLI prints one line and exits 2. A reader that went away (EPIPE, `| head`) is not an error.
 */
import { closeSync, openSync, writeSync } from 'node:fs';

/** Writing an output failed: "NAME: reason". The CLI exits 2 with this one line. */
export class OutputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutputError';
  }
}

/** The reader of standard output went away (EPIPE): stop quietly. */
export class ReaderGone extends Error {}

/** Human reason for a failed write or open, as the capture reader words them. */
export function writeReason(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  switch (code) {
    case 'ENOSPC':
      return 'no space left on device';
    case 'EDQUOT':
      return 'disk quota exceeded';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'ENOENT':
      return 'no such file or directory';
    case 'EISDIR':
      return 'is a directory';
    case 'EROFS':
      return 'read-only file system';
    case 'EIO':
      return 'input/output error';
    default:
      return err instanceof Error ? err.message.replace(/^[A-Z]+: /, '') : String(err);
  }
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Writes all of `data` to `fd`, waiting out a full non-blocking pipe. Throws the errno error. */
export function writeAllSync(fd: number, data: Uint8Array): void {
  let off = 0;
  while (off < data.length) {
    try {
      off += writeSync(fd, data, off, data.length - off);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
      Atomics.wait(sleeper, 0, 0, 1); // the reader is slower than us: wait for it, holding nothing more
    }
  }
}

/** Blocks up to this many UTF-16 units are encoded into the reused buffer (3 octets each at most). */
const SCRATCH_UNITS = 256 * 1024;

/** Standard output (or any descriptor) written synchronously; `name` is how errors name it. */
export class SyncOutput {
  /** Blocks are encoded into this one buffer, not a new one each (a million-line run writes thousands). */
  private scratch: Buffer = Buffer.allocUnsafe(0);

  constructor(
    private readonly fd: number,
    private readonly name: string,
  ) {}

  write(s: string): void {
    if (s.length === 0) return;
    try {
      this.scratch = writeStringSync(this.fd, s, this.scratch);
    } catch (e) {
      throw this.failure(e);
    }
  }

  /** Octets as they are (UTF-8 text). */
  writeBytes(b: Uint8Array): void {
    if (b.length === 0) return;
    try {
      writeAllSync(this.fd, b);
    } catch (e) {
      throw this.failure(e);
    }
  }

  /** A reader gone (EPIPE) or the error naming this output. */
  private failure(e: unknown): Error {
    if ((e as NodeJS.ErrnoException).code === 'EPIPE') return new ReaderGone('EPIPE');
    return new OutputError(`${this.name}: cannot write: ${writeReason(e)}`);
  }
}

/**
 * Writes `s` as UTF-8 (the octets Buffer.from(s) gives) in pieces of at most SCRATCH_UNITS code
 * units, each encoded into `scratch` (grown as needed, returned for the next call): no buffer as
 * large as a whole document (tens of MB for a merge's --json or --junit). A piece never ends
 * between the two halves of a surrogate pair, which would each become U+FFFD.
 */
function writeStringSync(fd: number, s: string, scratch: Buffer): Buffer {
  let b = scratch;
  for (let at = 0; at < s.length; ) {
    let end = Math.min(s.length, at + SCRATCH_UNITS);
    if (end < s.length) {
      const c = s.charCodeAt(end - 1);
      if (c >= 0xd800 && c <= 0xdbff) end--;
    }
    const need = (end - at) * 3;
    if (b.length < need) b = Buffer.allocUnsafe(Math.max(need, 64 * 1024));
    const n = b.write(at === 0 && end === s.length ? s : s.slice(at, end), 0, 'utf8');
    writeAllSync(fd, b.subarray(0, n));
    at = end;
  }
  return b;
}

/** Writes a whole file (the --junit XML), turning any failure into an OutputError naming it. */
export function writeFileOrFail(path: string, flag: string, text: string): void {
  let fd: number;
  try {
    fd = openSync(path, 'w');
  } catch (e) {
    throw new OutputError(`${flag} ${path}: cannot write: ${writeReason(e)}`);
  }
  try {
    writeStringSync(fd, text, Buffer.allocUnsafe(0));
  } catch (e) {
    throw new OutputError(`${flag} ${path}: cannot write: ${writeReason(e)}`);
  } finally {
    try {
      closeSync(fd);
    } catch {
      // close after a failed write adds nothing to the first error
    }
  }
}

/** The output and error writers a run (and every subcommand) writes its text to. */
export interface RunIo {
  out(s: string): void;
  err(s: string): void;
  /**
   * The same output as octets (UTF-8), written before it returns: the text output's blocks of
   * lines go this way when given (cli/line-block.ts), without a string of each block.
   */
  outBytes?(b: Uint8Array): void;
}

/** Output and error writers that call `erase` first: a status or progress line on the same terminal goes before the text. */
export function erasingFirst(io: RunIo, erase: () => void): RunIo {
  return {
    out: (s) => {
      erase();
      io.out(s);
    },
    err: (s) => {
      erase();
      io.err(s);
    },
    ...(io.outBytes
      ? {
          outBytes: (b: Uint8Array) => {
            erase();
            io.outBytes!(b);
          },
        }
      : {}),
  };
}
