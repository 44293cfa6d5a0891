import { open, type FileHandle } from 'node:fs/promises';
import type { CaptureReadError, CaptureSummary, PacketRecord } from './packet.js';
import { isPcapMagic, PcapParser } from './pcap-format.js';
import { BT_SHB, PcapngParser } from './pcapng-format.js';
import { RecordSink, bytes, type FormatParser } from './record-sink.js';
import { gunzipFile, isGzipFile, maybeGunzip } from './gzip.js';
import { lend, recycling, unlend } from './lent-bytes.js';

export { isGzipFile };

/**
 * Streaming capture reader: large reads into one reusable buffer, records parsed in place and
 * handed out as views. A record straddling a read boundary is moved to the buffer start; the
 * buffer grows only as far as one legal record needs.
 */

/** The capture cannot be opened at all (missing, unreadable, a directory): "PATH: reason". */
export class CaptureOpenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CaptureOpenError';
  }
}

export interface ReadCaptureOptions {
  /** Bytes per read (and the initial buffer size). Default 4 MiB. */
  chunkSize?: number;
  /** Stop after this many records (tshark -c): the rest of the file is not read. */
  maxPackets?: number;
  /** Awaited before each read: a consumer that is behind (worker threads) holds the reader back. */
  beforeRead?: () => Promise<void> | void;
  /** A gzip-compressed file: its compressed octets read so far go here (a progress bar's position). */
  compressed?: { read: number };
}

const DEFAULT_CHUNK = 4 * 1024 * 1024;
/**
 * Bytes per read from a stream: a read returns at most one of the stream's chunks (a pipe gives
 * 64 KiB, gunzip 16 KiB), so a bigger buffer only costs its zeroing, 16 MiB per run at 4 MiB.
 */
const STREAM_CHUNK = 256 * 1024;
/** How standard input is named in error lines. */
export const STDIN_NAME = '<stdin>';

/** Where bytes come from: fills buf[off, off+len) and returns the count, 0 at the end. */
interface ByteSource {
  read(buf: Uint8Array, off: number, len: number): Promise<number>;
}

class FileSource implements ByteSource {
  constructor(
    private readonly fh: FileHandle,
    /** The file's size when it was opened (a hint: a file still being written may grow). */
    readonly size: number | null = null,
  ) {}
  async read(buf: Uint8Array, off: number, len: number): Promise<number> {
    const r = await this.fh.read(buf, off, len, null);
    return r.bytesRead;
  }
}

/** Pull-style reading of a stream (stdin, a pipe): copies its chunks into the reader's buffer. */
class StreamSource implements ByteSource {
  private readonly it: AsyncIterator<Uint8Array | string>;
  private pending: Uint8Array | null = null;

  constructor(stream: AsyncIterable<Uint8Array | string>) {
    this.it = stream[Symbol.asyncIterator]();
  }

  async read(buf: Uint8Array, off: number, len: number): Promise<number> {
    let chunk = this.pending;
    this.pending = null;
    while (chunk === null || chunk.length === 0) {
      const r = await this.it.next();
      if (r.done === true) return 0;
      const v: Uint8Array | string = r.value;
      chunk = typeof v === 'string' ? Buffer.from(v, 'latin1') : v;
    }
    const n = Math.min(len, chunk.length);
    buf.set(n === chunk.length ? chunk : chunk.subarray(0, n), off);
    if (n < chunk.length) this.pending = chunk.subarray(n);
    return n;
  }

  /** Stops the underlying stream when reading ends early (an error), so the process can exit. */
  async close(): Promise<void> {
    await this.it.return?.();
  }
}

/** Human reason for a failed open(2). */
export function openReason(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  switch (code) {
    case 'ENOENT':
      return 'no such file or directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'is a directory';
    default:
      return err instanceof Error ? err.message : String(err);
  }
}

/** Opens a capture file for reading, with its size when it is a regular file; the only failure is a CaptureOpenError. */
async function openCaptureFile(path: string): Promise<{ fh: FileHandle; size: number | null }> {
  let fh: FileHandle;
  let size: number | null = null;
  try {
    fh = await open(path, 'r');
  } catch (err) {
    throw new CaptureOpenError(`${path}: ${openReason(err)}`);
  }
  try {
    // open(2) succeeds on a directory; reading it fails later with a worse message.
    const st = await fh.stat();
    if (st.isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    if (st.isFile()) size = st.size;
  } catch (err) {
    await fh.close();
    throw new CaptureOpenError(`${path}: ${openReason(err)}`);
  }
  return { fh, size };
}

/**
 * Reads a pcap or pcapng capture, calling onPacket once per record with one reused PacketRecord
 * (its data is a view valid only during the call). path '-' reads standard input.
 * Format problems never throw: reading stops with summary.error after every earlier packet.
 */
export async function readCapture(
  path: string,
  onPacket: (p: PacketRecord) => void,
  opts: ReadCaptureOptions = {},
): Promise<CaptureSummary> {
  if (path === '-') {
    if (process.stdin.isTTY === true)
      throw new CaptureOpenError('-: standard input is a terminal; pipe a capture into it');
    return readCaptureStream(process.stdin, '-', onPacket, opts);
  }
  const { fh, size } = await openCaptureFile(path);
  if (isGzipFile(path)) {
    // capture.pcap.gz: decompressed as a stream (offsets in messages are of the decompressed capture).
    await fh.close();
    const warnings: string[] = [];
    const src = new StreamSource(gunzipFile(path, (n) => warnings.push(trailingGzip(n)), opts.compressed));
    try {
      return withWarnings(await run(src, path, path, onPacket, opts), warnings);
    } finally {
      await src.close();
    }
  }
  try {
    return await run(new FileSource(fh, size), path, path, onPacket, opts);
  } finally {
    await fh.close();
  }
}

/** Reads a capture from any byte stream (standard input, a pipe, a socket). `path` names it in the summary. */
export async function readCaptureStream(
  stream: AsyncIterable<Uint8Array | string>,
  path: string,
  onPacket: (p: PacketRecord) => void,
  opts: ReadCaptureOptions = {},
): Promise<CaptureSummary> {
  // Standard input (or a pipe) may be gzip-compressed, as tshark accepts: decided by its first octets.
  const warnings: string[] = [];
  const src = new StreamSource(await maybeGunzip(stream, (n) => warnings.push(trailingGzip(n))));
  try {
    return withWarnings(await run(src, path, path === '-' ? STDIN_NAME : path, onPacket, opts), warnings);
  } finally {
    await src.close();
  }
}

/** The one warning for octets after a gzip stream's last member (as `gunzip -c`: the data before them is read). */
function trailingGzip(octets: number): string {
  return `${bytes(octets)} after the end of the gzip-compressed data ignored (not gzip: the decompressed capture before them was read)`;
}

function withWarnings(s: CaptureSummary, warnings: readonly string[]): CaptureSummary {
  return warnings.length > 0 ? { ...s, warnings: [...warnings] } : s;
}

/** Rule a read error should be reported under: a file cut short mid-record vs. an unreadable one. */
export function readErrorRule(e: CaptureReadError): 'capture.truncated' | 'capture.read-error' {
  return e.message.startsWith('truncated ') ? 'capture.truncated' : 'capture.read-error';
}

function hex32(dv: DataView, pos: number): string {
  return `0x${dv.getUint32(pos, false).toString(16).padStart(8, '0')}`;
}

/** Picks the parser from the first bytes; null (with sink.error set) when the input is no capture. */
function detect(dv: DataView, pos: number, end: number, sink: RecordSink): FormatParser | null {
  const n = end - pos;
  if (n === 0) {
    sink.fail(0, 'empty file: no capture header');
    return null;
  }
  if (n < 4) {
    sink.fail(0, `file too short to be a capture: ${bytes(n)}`);
    return null;
  }
  if (isPcapMagic(dv, pos)) return new PcapParser(sink);
  if (dv.getUint32(pos, false) === BT_SHB) return new PcapngParser(sink);
  const b0 = dv.getUint8(pos);
  const b1 = dv.getUint8(pos + 1);
  if (b0 === 0x1f && b1 === 0x8b)
    sink.fail(0, 'gzip-compressed file: decompress it first (e.g. gunzip -c FILE | mpa-dissect -)');
  else if (dv.getUint32(pos, true) === 0xa1b2cd34 || dv.getUint32(pos, false) === 0xa1b2cd34) {
    sink.fail(0, 'Kuznetzov-modified pcap (magic 0xa1b2cd34) is not supported: convert it with editcap');
  } else sink.fail(0, `not a pcap or pcapng file: unknown magic ${hex32(dv, pos)}`);
  return null;
}

async function run(
  src: ByteSource,
  path: string,
  file: string,
  onPacket: (p: PacketRecord) => void,
  opts: ReadCaptureOptions,
): Promise<CaptureSummary> {
  const lentBuffers: Uint8Array[] = [];
  try {
    return await parseAll(src, path, file, onPacket, opts, lentBuffers);
  } finally {
    // Neither buffer is written again: views into them stay valid without being copied (and a
    // long-lived process does not keep them through the list of lent buffers).
    for (const b of lentBuffers) unlend(b);
  }
}

async function parseAll(
  src: ByteSource,
  path: string,
  file: string,
  onPacket: (p: PacketRecord) => void,
  opts: ReadCaptureOptions,
  lentBuffers: Uint8Array[],
): Promise<CaptureSummary> {
  let chunk = Math.max(16, Math.floor(opts.chunkSize ?? DEFAULT_CHUNK));
  // A small file is read in one go into buffers of its size: two zeroed 8 MiB buffers were a
  // tenth of the start-up time of a run on a sample capture.
  const size = src instanceof FileSource ? src.size : null;
  const small = opts.chunkSize === undefined && size !== null && size < chunk;
  if (small) chunk = Math.max(16, size + 1);
  else if (opts.chunkSize === undefined && !(src instanceof FileSource)) chunk = STREAM_CHUNK;
  const sink = new RecordSink(file, onPacket);
  if (opts.maxPackets !== undefined) sink.limit = opts.maxPackets;
  // Double-buffered: the next read runs (in libuv's thread pool) while this buffer is parsed. Reads
  // land RESERVE octets into a buffer, so the record cut by the previous buffer's end is copied in
  // front of them and parsing goes on without moving the new bytes. A record longer than RESERVE
  // grows the buffer as before.
  const RESERVE = small ? chunk : Math.max(chunk, 256 * 1024);
  let buf = new Uint8Array(RESERVE + chunk);
  let spare = new Uint8Array(RESERVE + chunk);
  let dv = new DataView(buf.buffer);
  // Packets' bytes are views into these two buffers; consumers may keep them (lent-bytes.ts) until
  // recycling() says a buffer is about to be written again.
  lend(buf);
  lend(spare);
  lentBuffers.push(buf, spare);
  let pos = RESERVE;
  let end = RESERVE;
  /** File offset of buf[0] (negative while the first read sits RESERVE octets in). */
  let base = -RESERVE;
  let eof = false;
  let parser: FormatParser | null = null;
  let pending: Promise<number> | null = null;
  const readError = (err: unknown, at: number): void => {
    const msg = err instanceof Error ? err.message : String(err);
    // A gzip stream cut short is a capture cut short (tcpdump | gzip stopped with Ctrl-C).
    if (msg === 'gzip: unexpected end of file') sink.fail(at, 'truncated gzip stream: the compressed data ends early');
    else
      sink.fail(
        at,
        msg.startsWith('gzip: ') ? `gzip-compressed data is corrupt (${msg.slice(6)})` : `read error: ${msg}`,
      );
  };
  try {
    end += await src.read(buf, RESERVE, chunk);
  } catch (err) {
    readError(err, 0);
  }
  // Reading ahead is for files: a stream (stdin, gzip) is read when its bytes are needed, so that
  // stopping early never leaves a read waiting on a writer that keeps the pipe open.
  const ahead = src instanceof FileSource;
  if (end === RESERVE) eof = true;
  else if (ahead) pending = src.read(spare, RESERVE, chunk);
  for (;;) {
    if (sink.error !== null) break;
    let need = 4;
    if (parser === null && (end - pos >= 4 || eof)) parser = detect(dv, pos, end, sink);
    if (parser !== null) {
      pos = parser.parse(buf, dv, pos, end, base, eof);
      need = parser.need;
    }
    if (sink.error !== null || sink.full || sink.packets >= sink.limit) break;
    if (eof) {
      if (pos < end) sink.fail(base + pos, `${bytes(end - pos)} of trailing data could not be parsed`);
      break;
    }
    // Backpressure (worker threads behind): wait before taking the next chunk.
    if (opts.beforeRead) await opts.beforeRead();
    let n: number;
    try {
      if (pending === null) recycling();
      n = await (pending ?? src.read(spare, RESERVE, chunk));
    } catch (err) {
      pending = null;
      readError(err, base + end);
      break;
    }
    pending = null;
    const tail = end - pos;
    if (tail <= RESERVE && need <= RESERVE + chunk) {
      // The unparsed tail goes just before the bytes read into the spare buffer; the buffers swap.
      spare.set(buf.subarray(pos, end), RESERVE - tail);
      base += pos - (RESERVE - tail);
      const old = buf;
      buf = spare;
      spare = old;
      dv = new DataView(buf.buffer);
      pos = RESERVE - tail;
      end = RESERVE + n;
    } else {
      // A record longer than RESERVE: keep it at the buffer start, grow as far as one legal record
      // needs (parsers ask only for that, bounded by their limits), append what was read.
      recycling();
      buf.copyWithin(0, pos, end);
      base += pos;
      end = tail;
      pos = 0;
      if (end + n > buf.length || need > buf.length) {
        const bigger = new Uint8Array(Math.max(need, end + n, Math.min(buf.length * 2, need + chunk)));
        bigger.set(buf.subarray(0, end));
        unlend(buf); // never written again: views into it stay valid
        buf = bigger;
        lend(buf);
        lentBuffers.push(buf);
        dv = new DataView(buf.buffer);
      }
      buf.set(spare.subarray(RESERVE, RESERVE + n), end);
      end += n;
    }
    if (n === 0) eof = true;
    else if (ahead) {
      recycling();
      pending = src.read(spare, RESERVE, chunk);
    }
  }
  // A read still running when parsing stopped (an error, -c) finishes before the file closes.
  if (pending !== null) await pending.catch(() => 0);
  return {
    path,
    format: parser?.format ?? null,
    packets: sink.packets,
    bytes: sink.bytes,
    linkTypes: sink.linkTypes,
    error: sink.error,
  };
}
