/**
 * tshark over many captures in one process. tshark spends most of a CPU second registering its
 * dissectors before it reads a packet, which over a corpus of hundreds of small captures is
 * nearly all of the oracle's cost. So the captures are appended into one capture, each in
 * addresses of its own (every IPv4 and IPv6 address of capture i is rewritten into a block
 * reserved for i), so that no TCP conversation, IP reassembly or MPA state of one capture meets
 * another's, and tshark's per-frame output is split back by frame number.
 *
 * Only what tshark itself would read of each capture is appended: `capinfos` (no dissectors, one
 * process for all) counts the records wiretap reads, and a capture whose count differs from our
 * reader's, whose link type is not Ethernet, or that has too many addresses, is left out of the
 * batch and given to tshark alone, as before. Timestamps are kept; outputs that depend on the
 * first frame's time or on tcp.stream numbering do not suit a batch, nor fields that name other
 * frames (in -V text, the reassembly lines' frame numbers are renumbered).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { readCapture } from '../../src/capture/read-capture.js';
import { LINKTYPE_ETHERNET } from '../../src/capture/link-types.js';
import { buildPcap, type PcapFrame } from '../../src/report/pcap-writer.js';

const run = promisify(execFile);

/** One frame's lines of tshark's -V output, with its frame number within its own capture. */
export interface FrameBlock {
  frame: number;
  text: string;
}

/** Records wiretap reads of each file (capinfos continues past a file it cannot read). */
async function wiretapCounts(files: readonly string[]): Promise<Map<string, number>> {
  const { stdout } = await run('capinfos', ['-T', '-r', '-c', '-M', ...files], { maxBuffer: 64 << 20 }).catch(
    (e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }),
  );
  const counts = new Map<string, number>();
  for (const line of stdout.split('\n')) {
    const tab = line.lastIndexOf('\t');
    if (tab > 0) counts.set(line.slice(0, tab), Number(line.slice(tab + 1)));
  }
  return counts;
}

/** Rewrites the IP addresses of one Ethernet frame in place into capture `ci`'s block; false when it cannot. */
function remap(data: Uint8Array, ci: number, seen: Map<string, number>): boolean {
  let o = 12;
  // 802.1Q / 802.1ad tags (stacked).
  while (
    o + 2 <= data.length &&
    (data[o] === 0x81 || data[o] === 0x88) &&
    (data[o + 1] === 0x00 || data[o + 1] === 0xa8)
  )
    o += 4;
  if (o + 2 > data.length) return true;
  const type = (data[o]! << 8) | data[o + 1]!;
  const ip = o + 2;
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
 */
export function tsharkFieldsMany(
  files: readonly string[],
  args: readonly string[],
  fields: readonly string[],
): Promise<Map<string, FrameBlock[]>> {
  const all = [...args, '-T', 'fields', '-e', 'frame.number', ...fields.flatMap((f) => ['-e', f])];
  return many(files, all, fieldLines, (line, local) => `${local}${line.slice(line.indexOf('\t') >>> 0)}`);
}

async function many(
  files: readonly string[],
  args: readonly string[],
  split: Split,
  renumber: (text: string, local: number, base: number) => string,
): Promise<Map<string, FrameBlock[]>> {
  const counts = await wiretapCounts(files);
  const frames: PcapFrame[] = [];
  const parts: Part[] = [];
  const alone: string[] = [];
  for (const file of files) {
    const mine: PcapFrame[] = [];
    const seen = new Map<string, number>();
    let ok = parts.length < 1 << 14;
    const summary = await readCapture(file, (p) => {
      if (!ok) return;
      if (p.linkType !== LINKTYPE_ETHERNET) ok = false;
      const data = p.data.slice();
      if (!remap(data, parts.length, seen)) ok = false;
      mine.push({ tsSec: p.tsSec, tsNsec: p.tsNsec, data, origLen: p.origLen });
    }).catch(() => null);
    if (!ok || summary === null || counts.get(file) !== mine.length || mine.length === 0) {
      alone.push(file);
      continue;
    }
    parts.push({ file, first: frames.length + 1, count: mine.length });
    for (const f of mine) frames.push(f);
  }
  const out = new Map<string, FrameBlock[]>();
  const dir = mkdtempSync(join(tmpdir(), 'mpa-tshark-batch-'));
  try {
    if (parts.length > 0) {
      const merged = join(dir, 'batch.pcap');
      writeFileSync(merged, buildPcap(LINKTYPE_ETHERNET, frames, { nano: true }));
      // The batch is a capture we wrote whole: tshark failing on it is a failure, not a cut capture.
      const blocks = split(await tshark(merged, args, true));
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
