/**
 * tshark over many captures in one process. tshark spends most of a CPU second registering its
 * dissectors before it reads a packet, which over a corpus of hundreds of small captures is
 * nearly all of the oracle's cost. So the captures are appended into one capture, each in
 * addresses of its own (every IPv4 and IPv6 address of capture i is rewritten into a block
 * reserved for i), so that no TCP conversation, IP reassembly or MPA state of one capture meets
 * another's, and tshark's per-frame output is split back by frame number.
 *
 * The captures are appended by `mergecap -a`: wiretap reads each one as tshark would alone
 * (timestamps and their resolution, lengths, packet comments, interfaces), and each file's
 * addresses are then rewritten in place in the pcapng mergecap wrote. `capinfos` (no dissectors,
 * one process for all) counts the records of each; a capture wiretap does not read to the end,
 * whose link type is not Ethernet or that has too many addresses is left out of the batch and
 * given to tshark alone, as before. Timestamps are kept; outputs that depend on the first frame's
 * time, on tcp.stream numbering or on the interfaces do not suit a batch, nor fields that name
 * other frames unless renumbered (in -V text the reassembly lines' frame numbers are; in -T
 * fields those named in frameFields). tsharkPdmlPairs() compares two captures field by field,
 * frame numbers, streams and times included, by reading each side at the same place of a batch
 * of its own.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { LINKTYPE_ETHERNET } from '../../src/capture/link-types.js';

const run = promisify(execFile);

/** One frame's lines of tshark's -V output, with its frame number within its own capture. */
export interface FrameBlock {
  frame: number;
  text: string;
}

/** An Ethernet frame's EtherType and where its IP header starts, past 802.1Q/802.1ad tags; null when cut short. */
function ipHeader(data: Uint8Array): { type: number; ip: number } | null {
  let o = 12;
  while (
    o + 2 <= data.length &&
    (data[o] === 0x81 || data[o] === 0x88) &&
    (data[o + 1] === 0x00 || data[o + 1] === 0xa8)
  )
    o += 4;
  if (o + 2 > data.length) return null;
  return { type: (data[o]! << 8) | data[o + 1]!, ip: o + 2 };
}

/** Rewrites the IP addresses of one Ethernet frame in place into capture `ci`'s block; false when it cannot. */
function remap(data: Uint8Array, ci: number, seen: Map<string, number>): boolean {
  const h = ipHeader(data);
  if (h === null) return true;
  const { type, ip } = h;
  const key = (at: number, n: number) => Array.from(data.subarray(at, at + n)).join('.');
  const index = (k: string) => {
    let i = seen.get(k);
    if (i === undefined) seen.set(k, (i = seen.size + 1));
    return i;
  };
  if (type === 0x0800 && ip + 20 <= data.length) {
    for (const at of [ip + 12, ip + 16]) {
      const k = index(`4:${key(at, 4)}`);
      if (k > 254) return false;
      data.set([100, 64 + (ci >> 8), ci & 0xff, k], at);
    }
  } else if (type === 0x86dd && ip + 40 <= data.length) {
    for (const at of [ip + 8, ip + 24]) {
      const k = index(`6:${key(at, 16)}`);
      if (k > 0xffff) return false;
      data.set([0xfd, 0x00, 0x6d, 0x70, 0x61, 0x64, 0, 0, 0, 0, ci >> 8, ci & 0xff, 0, 0, k >> 8, k & 0xff], at);
    }
  }
  return true;
}

interface Part {
  file: string;
  first: number;
  count: number;
}

/** Files with their frames in one appended capture: which frames are whose. */
interface Appended {
  /** The appended capture (pcapng), or null when no file could go into it. */
  path: string | null;
  parts: Part[];
  /** The files a batch cannot hold: each is read by a tshark of its own. */
  alone: string[];
  /** Each part's addresses in the order they were numbered in its block (as `numbering` takes them). */
  addresses: Array<Map<string, number>>;
}

/**
 * Files `capinfos` reads to the end, with the records it read; the files it stops in (cut short,
 * unreadable) are left out: mergecap would stop there too.
 */
async function wiretapCounts(files: readonly string[]): Promise<Map<string, number>> {
  const { stdout, stderr } = await run('capinfos', ['-T', '-r', '-c', '-M', ...files], { maxBuffer: 64 << 20 }).catch(
    (e: { stdout?: string; stderr?: string }) => ({ stdout: e.stdout ?? '', stderr: e.stderr ?? '' }),
  );
  const broken = new Set([...stderr.matchAll(/^capinfos: .* from "(.*)"\.$/gm)].map((m) => m[1]!));
  const counts = new Map<string, number>();
  for (const line of stdout.split('\n')) {
    const tab = line.lastIndexOf('\t');
    const file = line.slice(0, tab);
    if (tab > 0 && !broken.has(file)) counts.set(file, Number(line.slice(tab + 1)));
  }
  return counts;
}

/**
 * Walks the Enhanced Packet Blocks of a pcapng (as mergecap writes it: sections, interfaces,
 * EPBs) and hands each packet's data, in place, with its link type. False at a block it does not
 * know how to walk.
 */
function eachPacket(buf: Buffer, visit: (index: number, linkType: number, data: Buffer) => void): boolean {
  let le = true;
  let links: number[] = [];
  let n = 0;
  for (let o = 0; o + 12 <= buf.length; ) {
    if (buf.readUInt32LE(o) === 0x0a0d0d0a) {
      le = buf.readUInt32LE(o + 8) === 0x1a2b3c4d;
      links = [];
    }
    const u32 = (at: number) => (le ? buf.readUInt32LE(at) : buf.readUInt32BE(at));
    const type = u32(o);
    const len = u32(o + 4);
    if (len < 12 || o + len > buf.length) return false;
    if (type === 1) links.push(le ? buf.readUInt16LE(o + 8) : buf.readUInt16BE(o + 8));
    else if (type === 6) {
      const caplen = u32(o + 20);
      if (28 + caplen > len) return false;
      visit(n++, links[u32(o + 8)] ?? -1, buf.subarray(o + 28, o + 28 + caplen));
    } else if (type === 2 || type === 3) return false; // obsolete and simple packet blocks: not written by mergecap
    o += len;
  }
  return true;
}

/**
 * The files appended into one pcapng by mergecap -a: wiretap reads each file (timestamps and
 * their resolution, lengths, packet comments, interfaces as tshark reads them alone), and each
 * file's IP addresses are then rewritten into a block of its own. A file wiretap does not read
 * to the end, whose link type is not Ethernet or that has too many addresses goes alone.
 * `numbering` (by file) continues another batch's numbering of each file's addresses.
 */
async function appendCaptures(
  files: readonly string[],
  dir: string,
  numbering?: ReadonlyArray<ReadonlyMap<string, number>>,
): Promise<Appended> {
  const counts = await wiretapCounts(files);
  const readable = files.map((_, i) => i).filter((i) => (counts.get(files[i]!) ?? 0) > 0);
  const alone = files.filter((f) => !((counts.get(f) ?? 0) > 0));
  alone.push(...readable.slice(1 << 14).map((i) => files[i]!));
  let batch = readable.slice(0, 1 << 14);
  const path = join(dir, 'batch.pcapng');
  for (;;) {
    if (batch.length === 0) return { path: null, parts: [], alone, addresses: [] };
    const parts: Part[] = [];
    let first = 1;
    for (const i of batch) {
      const file = files[i]!;
      parts.push({ file, first, count: counts.get(file)! });
      first += counts.get(file)!;
    }
    await run('mergecap', ['-a', '-F', 'pcapng', '-w', path, ...batch.map((i) => files[i]!)], { maxBuffer: 64 << 20 });
    const buf = readFileSync(path);
    const failed = new Set<number>();
    const addresses = batch.map((i) => new Map(numbering?.[i]));
    let pi = 0;
    const walked = eachPacket(buf, (i, linkType, data) => {
      while (pi < parts.length && i + 1 >= parts[pi]!.first + parts[pi]!.count) pi++;
      if (linkType !== LINKTYPE_ETHERNET || !remap(data, pi, addresses[pi]!)) failed.add(pi);
    });
    if (!walked) throw new Error(`tshark batch: mergecap wrote a pcapng not walked here (${path})`);
    const total = parts.reduce((s, p) => s + p.count, 0);
    if (pi !== parts.length - 1 || parts[pi]!.first + parts[pi]!.count - 1 !== total)
      throw new Error('tshark batch: mergecap appended another number of records than capinfos counted');
    if (failed.size === 0) {
      writeFileSync(path, buf);
      return { path, parts, alone, addresses };
    }
    alone.push(...batch.filter((_, k) => failed.has(k)).map((i) => files[i]!));
    batch = batch.filter((_, k) => !failed.has(k));
  }
}

/** One frame's piece of tshark's output: -V's block, or -T fields' line. */
type Split = (stdout: string) => FrameBlock[];

/** -V output cut into frame blocks, at each "Frame N:" line. */
const verboseBlocks: Split = (stdout) => {
  const blocks: FrameBlock[] = [];
  let start = -1;
  let frame = 0;
  const re = /^Frame (\d+):/gm;
  for (let m = re.exec(stdout); m; m = re.exec(stdout)) {
    if (start >= 0) blocks.push({ frame, text: stdout.slice(start, m.index) });
    start = m.index;
    frame = Number(m[1]);
  }
  if (start >= 0) blocks.push({ frame, text: stdout.slice(start) });
  return blocks;
};

/** -T fields output whose first field is frame.number: a line each. */
const fieldLines: Split = (stdout) =>
  stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => ({ frame: Number(l.slice(0, l.indexOf('\t') >>> 0)), text: l }));

/**
 * Runs `tshark <args> -r <capture> -V` over every file and returns each file's frames, numbered
 * as in that file alone. `args` must not depend on frame times or stream numbers.
 */
export function tsharkVerboseMany(
  files: readonly string[],
  args: readonly string[],
): Promise<Map<string, FrameBlock[]>> {
  // Reassembly lines name the frames of the pieces ("#74(1006)", "[Frame: 74, ...]"): renumbered
  // too. Upper layers' fields naming other frames ("[Response to: 8]") are not.
  return many(files, [...args, '-V'], verboseBlocks, (b, local, base) =>
    b
      .replace(/^Frame \d+:/, `Frame ${local}:`)
      .replace(/(#)(\d+)(?=\()|(\[Frame: )(\d+)(?=,)/g, (_, h?: string, n1?: string, f?: string, n2?: string) =>
        h ? `#${Number(n1) - base}` : `${f}${Number(n2) - base}`,
      ),
  );
}

/**
 * Runs `tshark <args> -r <capture> -T fields -e frame.number <fields>` over every file and returns
 * each file's lines (frame.number renumbered as in that file alone). `args` hold the -E options.
 * `frameFields` names those of `fields` whose values are frame numbers (rpc.repframe,
 * tcp.analysis.acks_frame): renumbered too, each occurrence of a comma-separated list.
 */
export function tsharkFieldsMany(
  files: readonly string[],
  args: readonly string[],
  fields: readonly string[],
  frameFields: readonly string[] = [],
): Promise<Map<string, FrameBlock[]>> {
  const all = [...args, '-T', 'fields', '-e', 'frame.number', ...fields.flatMap((f) => ['-e', f])];
  const columns = new Set(frameFields.map((f) => fields.indexOf(f) + 1));
  if (columns.has(0)) throw new Error(`tsharkFieldsMany: ${frameFields.join(', ')} not all among the fields`);
  return many(files, all, fieldLines, (line, local, base) =>
    line
      .split('\t')
      .map((v, i) =>
        i === 0
          ? String(local)
          : columns.has(i) && v !== ''
            ? v
                .split(',')
                .map((n) => String(Number(n) - base))
                .join(',')
            : v,
      )
      .join('\t'),
  );
}

/** -T json output with -e frame.number: a block each packet, its text the JSON of its fields. */
const jsonPackets: Split = (stdout) =>
  ((JSON.parse(stdout || '[]') as Array<{ _source: { layers: Record<string, string[]> } }>) ?? []).map((p) => ({
    frame: Number(p._source.layers['frame.number']?.[0]),
    text: JSON.stringify(p._source.layers),
  }));

/**
 * Runs `tshark <args> -r <capture> -T json -e frame.number <fields>` over every file and returns each
 * file's packets, as the fields of each (frame.number as in that file alone). JSON keeps every
 * occurrence of a field apart, whatever its text (packet comments with commas in them).
 */
export async function tsharkJsonMany(
  files: readonly string[],
  args: readonly string[],
  fields: readonly string[],
): Promise<Map<string, Array<Record<string, string[]>>>> {
  const all = [...args, '-T', 'json', '-e', 'frame.number', ...fields.flatMap((f) => ['-e', f])];
  const blocks = await many(files, all, jsonPackets, (text, local) =>
    JSON.stringify({ ...(JSON.parse(text) as object), 'frame.number': [String(local)] }),
  );
  return new Map([...blocks].map(([f, b]) => [f, b.map((x) => JSON.parse(x.text) as Record<string, string[]>)]));
}

/** One pair's PDML packets, each side read in the same place of a batch of its own. */
export interface PdmlPair {
  a: string;
  b: string;
  /** Frames before the pair's own in each batch (0 when read alone): frame.number minus base is the file's. */
  base: number;
}

/**
 * `tshark <args> -T pdml` of pairs of captures meant to hold the same frames (a file we wrote and
 * the capture it came from), for comparing them field by field, frame-numbered fields, tcp.stream,
 * frame.time_relative and all. The a sides are appended into one batch and the b sides into
 * another, pair i at the same place of both, each in the same address block: every field that
 * names a frame, a stream or a time since the first frame says the same in both when the pair's
 * frames are the same, and differs as it would alone when they are not. A pair whose sides differ
 * in frame count, or that a batch cannot hold, is read alone, two tshark runs.
 */
export async function tsharkPdmlPairs(
  pairs: ReadonlyArray<readonly [string, string]>,
  args: readonly string[],
): Promise<PdmlPair[]> {
  const all = [...args, '-T', 'pdml'];
  const out: PdmlPair[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'mpa-tshark-pairs-'));
  try {
    const counts = await wiretapCounts(pairs.flat());
    let batched = pairs
      .map((_, i) => i)
      .filter((i) => {
        const [a, b] = pairs[i]!;
        return counts.get(a) !== undefined && counts.get(a) === counts.get(b);
      });
    for (;;) {
      if (batched.length === 0) break;
      mkdirSync(join(dir, 'a'), { recursive: true });
      mkdirSync(join(dir, 'b'), { recursive: true });
      // Each b side's addresses numbered first, and each a side's as its b's: an a side whose
      // addresses differ from its b side's (swapped, changed) differs in the batch too.
      const bb = await appendCaptures(
        batched.map((i) => pairs[i]![1]),
        join(dir, 'b'),
      );
      if (bb.alone.length > 0) {
        const left = new Set(bb.alone);
        batched = batched.filter((i) => !left.has(pairs[i]![1]));
        continue;
      }
      const ba = await appendCaptures(
        batched.map((i) => pairs[i]![0]),
        join(dir, 'a'),
        bb.addresses,
      );
      if (ba.alone.length > 0) {
        const left = new Set(ba.alone);
        batched = batched.filter((i) => !left.has(pairs[i]![0]));
        continue;
      }
      const [da, db] = await Promise.all([tshark(ba.path!, all, true), tshark(bb.path!, all, true)]);
      const pa = pdmlPackets(da);
      const pb = pdmlPackets(db);
      batched.forEach((i, k) => {
        const part = ba.parts[k]!;
        const slice = (packets: string[]) => packets.slice(part.first - 1, part.first - 1 + part.count).join('');
        out[i] = { a: slice(pa), b: slice(pb), base: part.first - 1 };
      });
      break;
    }
    // The pairs a batch cannot hold: each side alone, as before batches.
    const queue = pairs.map((_, i) => i).filter((i) => out[i] === undefined);
    const worker = async () => {
      for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
        const [a, b] = pairs[i]!;
        out[i] = {
          a: pdmlPackets(await tshark(a, all)).join(''),
          b: pdmlPackets(await tshark(b, all)).join(''),
          base: 0,
        };
      }
    };
    await Promise.all([worker(), worker()]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

/** The capture (block) an address rewritten by remap() belongs to, or null when the frame has none. */
function blockOf(data: Uint8Array): number | null {
  const h = ipHeader(data);
  if (h === null) return null;
  const { type, ip } = h;
  if (type === 0x0800 && ip + 20 <= data.length && data[ip + 12] === 100)
    return ((data[ip + 13]! - 64) << 8) | data[ip + 14]!;
  if (type === 0x86dd && ip + 40 <= data.length && data[ip + 8] === 0xfd) return (data[ip + 18]! << 8) | data[ip + 19]!;
  return null;
}

/**
 * `tshark <args> -r <input> -Y <filter> -w <output>` for many jobs in one tshark: the inputs
 * appended into one batch, each job's filter applied to its own capture's frames only
 * (`frame.number` within the capture's range, and the filter), and the file tshark writes cut
 * back into one file per job by the address block of each frame written (editcap, no
 * dissectors). The files hold the frames, timestamps and lengths tshark writes, in addresses of
 * the batch's blocks: for comparing frame sets, not addresses. A job the batch cannot hold, or
 * whose written frames cannot all be told apart by address, is run alone.
 */
export async function tsharkWriteMany(
  jobs: ReadonlyArray<{ input: string; filter: string; output: string }>,
  args: readonly string[],
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mpa-tshark-write-'));
  try {
    const { path, parts, alone } = await appendCaptures(
      jobs.map((j) => j.input),
      dir,
    );
    const single = new Set(alone);
    if (path !== null && parts.length === jobs.length - alone.length) {
      const batched = jobs.filter((j) => !single.has(j.input));
      const filter = batched
        .map((j, k) => {
          const p = parts[k]!;
          const range = `frame.number >= ${p.first} && frame.number <= ${p.first + p.count - 1}`;
          return j.filter.trim() === '' ? `(${range})` : `(${range} && (${j.filter}))`;
        })
        .join(' || ');
      const written = join(dir, 'written.pcapng');
      await run('tshark', [...args, '-r', path, '-Y', filter, '-w', written], { maxBuffer: 64 << 20 });
      const blocks: Array<number | null> = [];
      const walked = eachPacket(readFileSync(written), (_, __, data) => blocks.push(blockOf(data)));
      const ordered =
        walked && blocks.every((b, i) => b !== null && b < parts.length && (i === 0 || b >= blocks[i - 1]!));
      if (ordered) {
        await Promise.all(
          batched.map((j, k) => {
            const first = blocks.indexOf(k) + 1;
            const last = blocks.lastIndexOf(k) + 1;
            // No frame written: a range past the end keeps none (an empty capture, as tshark writes).
            const range = first === 0 ? String(blocks.length + 1) : `${first}-${last}`;
            return run('editcap', ['-r', written, j.output, range]);
          }),
        );
      } else for (const j of batched) single.add(j.input);
    } else for (const j of jobs) single.add(j.input);
    for (const j of jobs)
      if (single.has(j.input)) await run('tshark', [...args, '-r', j.input, '-Y', j.filter, '-w', j.output]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A PDML document's packets, in order, each from its <packet> to the next. */
function pdmlPackets(doc: string): string[] {
  return doc
    .split('<packet>')
    .slice(1)
    .map((p) => `<packet>${p.replace(/<\/pdml>\s*$/, '')}`);
}

async function many(
  files: readonly string[],
  args: readonly string[],
  split: Split,
  renumber: (text: string, local: number, base: number) => string,
): Promise<Map<string, FrameBlock[]>> {
  const out = new Map<string, FrameBlock[]>();
  const dir = mkdtempSync(join(tmpdir(), 'mpa-tshark-batch-'));
  try {
    const { path, parts, alone } = await appendCaptures(files, dir);
    if (path !== null) {
      // The batch is a capture we wrote whole: tshark failing on it is a failure, not a cut capture.
      const blocks = split(await tshark(path, args, true));
      let pi = 0;
      for (const part of parts) out.set(part.file, []);
      for (const b of blocks) {
        while (pi < parts.length && b.frame >= parts[pi]!.first + parts[pi]!.count) pi++;
        const part = parts[pi];
        if (!part || b.frame < part.first) continue;
        const local = b.frame - part.first + 1;
        out.get(part.file)!.push({ frame: local, text: renumber(b.text, local, part.first - 1) });
      }
    }
    // The captures a batch cannot hold, one tshark each (two at a time).
    const queue = [...alone];
    const worker = async () => {
      for (let f = queue.shift(); f !== undefined; f = queue.shift()) out.set(f, split(await tshark(f, args)));
    };
    await Promise.all([worker(), worker()]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

/** tshark's standard output over one capture. A capture cut short makes tshark exit 2 after what it read. */
async function tshark(file: string, args: readonly string[], strict = false): Promise<string> {
  const { stdout } = await run('tshark', [...args, '-r', file], { maxBuffer: 1 << 30 }).catch(
    (e: { stdout?: string; stderr?: string }) => {
      if (strict) throw new Error(`tshark ${args.join(' ')} -r ${file}: ${e.stderr ?? String(e)}`);
      return { stdout: e.stdout ?? '' };
    },
  );
  return stdout;
}
