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

/** The decompressed bytes of a gzip stream; a corrupt or cut stream throws "gzip: ..." while iterating. */
export function gunzip(source: AsyncIterable<Uint8Array | string> | Readable): AsyncIterable<Uint8Array> {
  const input = source instanceof Readable ? source : Readable.from(source, { objectMode: false });
  return (async function* () {
    // node:zlib is loaded only for a compressed capture (start-up cost: DEVELOPING.md, Benchmarks).
    const { createGunzip } = await import('node:zlib');
    const z = createGunzip({ chunkSize: CHUNK });
    input.on('error', (e) => z.destroy(e));
    input.pipe(z);
    try {
      for await (const c of z as AsyncIterable<Uint8Array>) yield c;
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      throw new Error(`gzip: ${msg}`);
    } finally {
      input.unpipe(z);
      input.destroy();
      z.destroy();
    }
  })();
}

/** A gzip file's decompressed bytes. */
export function gunzipFile(path: string): AsyncIterable<Uint8Array> {
  return gunzip(createReadStream(path, { highWaterMark: CHUNK }));
}

/**
 * Looks at the first octets of a stream (standard input) and returns a stream of the capture:
 * decompressed when it is gzip, the same octets otherwise. Nothing is read beyond the first chunk.
 */
export async function maybeGunzip(
  stream: AsyncIterable<Uint8Array | string>,
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
  return isGzipMagic(first) ? gunzip(rest) : rest;
}
