/**
 * gzip-compressed captures (capture.pcap.gz, or piped through gzip), read as tshark reads them:
 * recognised by the magic octets 1f 8b and decompressed as a stream with node:zlib, so memory stays
 * at a few chunks whatever the compressed or decompressed size (a "zip bomb" only takes time).
 */
import { createReadStream, closeSync, openSync, readSync } from 'node:fs';
import { Readable } from 'node:stream';

/** Decompressed chunk size: large enough that the reader parses in big steps. */
const CHUNK = 256 * 1024;

export function isGzipMagic(b: Uint8Array): boolean {
  return b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b;
}

/** True when the file starts with the gzip magic (false when it cannot be read: the reader says why). */
export function isGzipFile(path: string): boolean {
  if (path === '-') return false;
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    return false;
  }
  try {
    const b = new Uint8Array(2);
    return readSync(fd, b, 0, 2, 0) === 2 && isGzipMagic(b);
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}

/** What a gzip stream held after its last member: octets that are no gzip member (gunzip -c warns of them too). */
export type OnTrailing = (octets: number) => void;

const FHCRC = 2;
const FEXTRA = 4;
const FNAME = 8;
const FCOMMENT = 16;

/**
 * The decompressed bytes of a gzip stream, member after member (RFC 1952: a file may hold several);
 * a corrupt or cut stream throws "gzip: ..." while iterating. Each member's header and trailer are
 * read here and its deflate data is inflated raw, so the end of the last member is known exactly:
 * octets after it that start no member are reported to `onTrailing` (all zero: padding, silent)
 * and the data before them is kept whole, as `gunzip -c` keeps it. (node:zlib's gunzip fails the
 * whole last write on such junk and loses its output: a small file was refused at offset 0.)
 */
export function gunzip(
  source: AsyncIterable<Uint8Array | string> | Readable,
  onTrailing: OnTrailing = () => {},
  /** Compressed octets inflated so far, kept up to date (a progress bar's position). */
  progress?: { read: number },
): AsyncIterable<Uint8Array> {
  const input = source instanceof Readable ? source : Readable.from(source, { objectMode: false });
  return (async function* () {
    // node:zlib is loaded only for a compressed capture (start-up cost: DEVELOPING.md, Benchmarks).
    const zlib = await import('node:zlib');
    const it = (input as AsyncIterable<Uint8Array | string>)[Symbol.asyncIterator]();
    let carry: Buffer = Buffer.alloc(0);
    let eof = false;
    /** Octets taken from the input so far. */
    let pulled = 0;
    const more = async (): Promise<boolean> => {
      if (eof) return false;
      const r = await it.next();
      if (r.done === true) {
        eof = true;
        return false;
      }
      const c = typeof r.value === 'string' ? Buffer.from(r.value, 'latin1') : Buffer.from(r.value);
      pulled += c.length;
      carry = carry.length === 0 ? c : Buffer.concat([carry, c]);
      return true;
    };
    const need = async (n: number): Promise<void> => {
      while (carry.length < n) if (!(await more())) throw new Error('gzip: unexpected end of file');
    };
    const trailing = async (): Promise<void> => {
      let n = 0;
      let zeros = true;
      for (;;) {
        for (const b of carry) if (b !== 0) zeros = false;
        n += carry.length;
        carry = Buffer.alloc(0);
        if (!(await more())) break;
      }
      if (n > 0 && !zeros) onTrailing(n);
    };
    try {
      for (let members = 0; ; members++) {
        if (carry.length < 2) await more();
        if (carry.length < 2) await more();
        if (carry.length === 0 && eof) return;
        const magic = carry.length >= 2 && carry[0] === 0x1f && carry[1] === 0x8b;
        if (members > 0 && (!magic || (carry.length >= 3 && carry[2] !== 8))) return await trailing();
        if (!magic) throw new Error('gzip: incorrect header check');
        await need(10);
        if (carry[2] !== 8) throw new Error('gzip: unknown compression method');
        const flags = carry[3]!;
        let pos = 10;
        if (flags & FEXTRA) {
          await need(pos + 2);
          pos += 2 + carry.readUInt16LE(pos);
          await need(pos);
        }
        for (const f of [FNAME, FCOMMENT])
          if (flags & f) {
            let z = carry.indexOf(0, pos);
            while (z < 0) {
              if (!(await more())) throw new Error('gzip: unexpected end of file');
              z = carry.indexOf(0, pos);
            }
            pos = z + 1;
          }
        if (flags & FHCRC) pos += 2;
        await need(pos);
        carry = carry.subarray(pos);
        const dataStart = pulled - carry.length;
        // The member's deflate data: inflated as a stream (bounded memory whatever it expands to).
        const z = zlib.createInflateRaw({ chunkSize: CHUNK });
        let ended = false;
        const endedP = new Promise<void>((res) => z.once('end', res)).then(() => {
          ended = true;
        });
        // Fed octets after the ones inflate has consumed, to find where the member ends.
        const fed: Buffer[] = [];
        let fedBase = 0;
        const feeder = (async () => {
          try {
            let first = true;
            while (!ended) {
              if (!first && !(await more())) break;
              first = false;
              if (carry.length === 0) continue;
              const c = carry;
              carry = Buffer.alloc(0);
              fed.push(c);
              // Octets inflate has consumed are dropped from the front: fed holds at most what is in flight.
              while (fed.length > 1 && fedBase + fed[0]!.length <= z.bytesWritten) fedBase += fed.shift()!.length;
              if (!z.write(c)) await Promise.race([new Promise((res) => z.once('drain', res)), endedP]);
            }
            if (!ended) z.end();
          } catch (e) {
            z.destroy(e as Error);
          }
        })();
        let size = 0;
        let crc = 0;
        for await (const c of z as AsyncIterable<Buffer>) {
          size += c.length;
          crc = zlib.crc32(c, crc);
          if (progress) progress.read = dataStart + z.bytesWritten;
          yield c;
        }
        await feeder;
        // What was fed beyond the member's deflate data goes back in front of what is still unread.
        const rest = Buffer.concat(fed).subarray(z.bytesWritten - fedBase);
        carry = carry.length === 0 ? rest : Buffer.concat([rest, carry]);
        await need(8);
        if (carry.readUInt32LE(0) !== crc >>> 0 || carry.readUInt32LE(4) !== size % 2 ** 32)
          throw new Error('gzip: incorrect data check');
        carry = carry.subarray(8);
      }
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      throw new Error(msg.startsWith('gzip: ') ? msg : `gzip: ${msg}`);
    } finally {
      await it.return?.();
      input.destroy();
    }
  })();
}

/** A gzip file's decompressed bytes. */
export function gunzipFile(
  path: string,
  onTrailing?: OnTrailing,
  compressed?: { read: number },
): AsyncIterable<Uint8Array> {
  return gunzip(createReadStream(path, { highWaterMark: CHUNK }), onTrailing, compressed);
}

/**
 * Looks at the first octets of a stream (standard input) and returns a stream of the capture:
 * decompressed when it is gzip, the same octets otherwise. Nothing is read beyond the first chunk.
 */
export async function maybeGunzip(
  stream: AsyncIterable<Uint8Array | string>,
  onTrailing?: OnTrailing,
): Promise<AsyncIterable<Uint8Array | string>> {
  const it = stream[Symbol.asyncIterator]();
  const head: Uint8Array[] = [];
  let have = 0;
  let done = false;
  while (have < 2) {
    const r = await it.next();
    if (r.done === true) {
      done = true;
      break;
    }
    const v: Uint8Array | string = r.value;
    const c = typeof v === 'string' ? Buffer.from(v, 'latin1') : v;
    head.push(c);
    have += c.length;
  }
  const first = Buffer.concat(head);
  const rest: AsyncIterable<Uint8Array | string> = (async function* () {
    try {
      if (first.length) yield first;
      if (done) return;
      for (;;) {
        const r = await it.next();
        if (r.done === true) {
          done = true;
          return;
        }
        yield r.value;
      }
    } finally {
      // Reading stopped early (a bad record): stop the source too, so standard input lets the process exit.
      if (!done) await it.return?.();
    }
  })();
  return isGzipMagic(first) ? gunzip(rest, onTrailing) : rest;
}
