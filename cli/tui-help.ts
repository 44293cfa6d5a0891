/**
 * `mpa-dissect tui --help`: what the terminal UI takes (its options, not the batch outputs' ones,
 * which tui refuses) and its keys, from the one key table the `?` overlay shows (src/tui/keys.ts).
 */
import { KEYS } from '../src/tui/keys.js';

/** The options `tui` accepts, as `mpa-dissect --help` describes them for the batch run. */
const TUI_OPTIONS: ReadonlyArray<readonly [string, string]> = [
  ['-Y, --display-filter FILTER', 'the filter the UI starts with (Wireshark syntax; / changes it)'],
  ['-r, --read-file FILE', 'the capture (the same as giving it as the argument)'],
  ['--mpa SPEC', 'force MPA on a flow: flow=SEL,markers=both|none|c2s|s2c,crc=on|off,seqstart=C:S or start=SEQ|C:S'],
  ['--tuf SPEC', 'force ULP Framing for TCP on a flow: flow=SEL,key=HEX or interval=N,start=SEQ'],
  ['--rules FILE', 'JSON rules file: rules off, other severities, thresholds'],
  ['--checksums', 'verify IPv4 and TCP checksums (off by default)'],
  ['--tcp-buffer-flow, --tcp-buffer-total, --tcp-reorder-window MiB', 'TCP reassembly bounds, as for the batch run'],
  ['-i IFACE', 'capture live on this interface instead of reading a file'],
  ['-f FILTER', 'capture filter (BPF), with -i'],
  ['-s LEN', 'snapshot length, with -i (default 262144)'],
  ['--capture-backend auto|cap|tcpdump|dumpcap', 'with -i: how packets are captured'],
  ['--flow-timeout SECONDS', 'with -i: a flow idle this long is finished'],
  ['-h, --help', 'this help'],
];

/** Wraps `text` into lines of at most `w` columns, each after `indent` spaces but the first. */
function wrap(text: string, w: number, indent: number): string {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > w) {
      out.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  out.push(line);
  return out.join(`\n${' '.repeat(indent)}`);
}

export function tuiHelp(): string {
  const kw = Math.max(...KEYS.map((k) => k.keys.length)) + 2;
  const keys = KEYS.map((k) => `  ${k.keys.padEnd(kw)}${wrap(k.does, 78 - 2 - kw, 2 + kw)}`);
  const opts = TUI_OPTIONS.map(([o, d]) =>
    o.length + 4 > 30 || d.split(' ').some((word) => word.length > 50)
      ? `  ${o}\n      ${wrap(d, 72, 6)}`
      : `  ${o.padEnd(28)}${wrap(d, 50, 30)}`,
  );
  return [
    'mpa-dissect tui [options] CAPTURE',
    'mpa-dissect tui [options] -i IFACE',
    '',
    'Browse a capture in the terminal: flows, PDUs, detail tree, bytes, findings.',
    'The batch outputs (-w, -V, -x, -q, -T, -z, --json, ...) are options of',
    'mpa-dissect without tui.',
    'Exit status: 0 on q, 2 when the capture cannot be read or an option is wrong.',
    '',
    'Options:',
    ...opts,
    '',
    'Keys:',
    ...keys,
    '',
  ].join('\n');
}
