/**
 * The generator's knobs, declared once: name, values, default, meaning. `mpa-dissect generate`
 * turns each into an option (--NAME VALUE), `generate --list` prints this table, and scenarios
 * (src/generate/scenarios.ts) are presets of these values. A knob added here is an option at once.
 */

export interface KnobSpec {
  readonly name: string;
  /** 'choice': one of `choices`; 'list': comma-separated `choices`; 'int': a whole number in [min, max]. */
  readonly kind: 'choice' | 'list' | 'int';
  readonly choices?: readonly string[];
  readonly min?: number;
  readonly max?: number;
  readonly default: string;
  readonly describe: string;
}

/** Message kinds of the mix (RDMAP, RFC 5040 and RFC 7306). */
export const MESSAGE_KINDS = [
  'send',
  'send-se',
  'send-inv',
  'write',
  'read',
  'atomic',
  'immediate',
  'terminate',
] as const;
export type MessageKind = (typeof MESSAGE_KINDS)[number];

/** Impairments: capture and network faults, injected protocol faults, sender mistakes of real stacks. */
export const IMPAIRMENTS = [
  // the network and the capture
  'reorder',
  'duplicate',
  'overlap',
  'loss',
  // faults in one FPDU (--at) or in the startup
  'bad-crc',
  'bad-fpduptr',
  'pad-nonzero',
  'bad-key',
  'pd-too-long',
  'initiator-initiator',
  // sender mistakes (every FPDU of the Initiator's direction)
  'wrong-pad',
  'no-pad',
  'length-counts-header',
  'length-counts-crc',
  'length-le',
  'marker-origin',
  'responder-first',
] as const;
export type Impairment = (typeof IMPAIRMENTS)[number];

export const SEGMENTATIONS = ['one-per-segment', 'packed', 'mss', 'random', 'large'] as const;
export type Segmentation = (typeof SEGMENTATIONS)[number];

export const KNOBS: readonly KnobSpec[] = [
  {
    name: 'rev',
    kind: 'choice',
    choices: ['1', '2'],
    default: '1',
    describe: 'MPA revision of both startup frames: 1 (RFC 5044) or 2 (RFC 6581, enhanced)',
  },
  {
    name: 'rtr',
    kind: 'choice',
    choices: ['none', 'send', 'write', 'read'],
    default: 'none',
    describe: 'Rev 2 peer-to-peer: the zero-length RTR the Initiator sends first (none: no peer-to-peer mode)',
  },
  {
    name: 'markers',
    kind: 'choice',
    choices: ['none', 'i2r', 'r2i', 'both'],
    default: 'none',
    describe: "Directions whose FPDUs carry markers (i2r: Initiator to Responder, asked for by the Reply's M)",
  },
  {
    name: 'crc',
    kind: 'choice',
    choices: ['on', 'off'],
    default: 'on',
    describe: 'CRC32c in every FPDU (C in the startup frames)',
  },
  {
    name: 'messages',
    kind: 'list',
    choices: MESSAGE_KINDS,
    default: 'send,write,read',
    describe: 'Message mix: RDMAP messages drawn at random (read and atomic are issued by the Initiator and answered)',
  },
  {
    name: 'count',
    kind: 'int',
    min: 0,
    max: 1000,
    default: '8',
    describe: 'Messages the Initiator sends (the Responder sends half as many, plus its answers)',
  },
  {
    name: 'size',
    kind: 'int',
    min: 0,
    max: 1048576,
    default: '1500',
    describe: 'Largest message payload in octets (each is 0 to this, drawn at random)',
  },
  {
    name: 'max-ulpdu',
    kind: 'int',
    min: 32,
    max: 64768,
    default: '1024',
    describe: 'Largest ULPDU (DDP segment); longer messages are cut into segments (MO/TO advancing, L on the last)',
  },
  {
    name: 'segmentation',
    kind: 'choice',
    choices: SEGMENTATIONS,
    default: 'one-per-segment',
    describe:
      'TCP segments: one FPDU each, packed (whole FPDUs up to the MSS), mss (cut every MSS octets), random (a re-segmenting middlebox), large (FPDUs up to max-ulpdu, larger than the MSS, as siw with GSO)',
  },
  { name: 'mss', kind: 'int', min: 64, max: 65495, default: '1460', describe: 'MSS both SYNs advertise' },
  {
    name: 'impair',
    kind: 'list',
    choices: IMPAIRMENTS,
    default: '',
    describe:
      'Impairments: reorder, duplicate, overlap (overlapping retransmission), loss (a segment missing from the capture); bad-crc, bad-fpduptr, pad-nonzero (in the FPDU --at); bad-key, pd-too-long (the Request), initiator-initiator; sender mistakes of the Initiator: wrong-pad ((len+2) mod 4), no-pad, length-counts-header, length-counts-crc, length-le (ULPDU_Length little-endian), marker-origin (markers counted from the startup frame), responder-first',
  },
  {
    name: 'at',
    kind: 'int',
    min: -1,
    max: 100000,
    default: '-1',
    describe: 'Index of the Initiator FPDU a one-FPDU fault hits (-1: one in the middle chosen by the seed)',
  },
  {
    name: 'ip',
    kind: 'choice',
    choices: ['4', '6'],
    default: '4',
    describe: 'IP version (10.0.0.1/10.0.0.2 or fd00::1/fd00::2)',
  },
  {
    name: 'vlan',
    kind: 'int',
    min: -1,
    max: 4094,
    default: '-1',
    describe: 'IEEE 802.1Q VLAN ID on every frame (-1: untagged)',
  },
  {
    name: 'seq-wrap',
    kind: 'choice',
    choices: ['no', 'yes'],
    default: 'no',
    describe: 'Initial sequence numbers just below 2^32, so both directions wrap during the FPDUs',
  },
  {
    name: 'start',
    kind: 'choice',
    choices: ['startup', 'mid-stream'],
    default: 'startup',
    describe:
      'Capture the handshake and the MPA startup, or start mid-stream (at a segment boundary after the first few FPDUs)',
  },
  {
    name: 'close',
    kind: 'choice',
    choices: ['none', 'fin', 'rst'],
    default: 'none',
    describe: 'How the capture ends: no close, FIN both ways, or a RST from the Initiator',
  },
];

export function knob(name: string): KnobSpec | undefined {
  return KNOBS.find((k) => k.name === name);
}

/** Knob values as typed settings. */
export interface Knobs {
  rev: number;
  rtr: 'none' | 'send' | 'write' | 'read';
  markers: 'none' | 'i2r' | 'r2i' | 'both';
  crc: boolean;
  messages: MessageKind[];
  count: number;
  size: number;
  maxUlpdu: number;
  segmentation: Segmentation;
  mss: number;
  impair: Impairment[];
  at: number;
  ip: 4 | 6;
  vlan: number | null;
  seqWrap: boolean;
  start: 'startup' | 'mid-stream';
  close: 'none' | 'fin' | 'rst';
}

export class KnobError extends Error {}

/** Checks one raw value against its knob; returns the value or throws a one-line KnobError. */
export function checkKnob(spec: KnobSpec, value: string): string {
  if (spec.kind === 'int') {
    const n = Number(value);
    if (value.trim() === '' || !Number.isInteger(n) || n < (spec.min ?? -Infinity) || n > (spec.max ?? Infinity)) {
      throw new KnobError(
        `--${spec.name}: ${JSON.stringify(value.slice(0, 40))} is not a whole number from ${spec.min} to ${spec.max}`,
      );
    }
    return String(n);
  }
  const parts =
    spec.kind === 'list'
      ? value
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== '')
      : [value];
  for (const p of parts) {
    if (!spec.choices!.includes(p))
      throw new KnobError(
        `--${spec.name}: unknown value ${JSON.stringify(p.slice(0, 40))} (choose from ${spec.choices!.join(', ')})`,
      );
  }
  if (spec.kind === 'list' && spec.name === 'messages' && parts.length === 0)
    throw new KnobError('--messages: give at least one message kind');
  return parts.join(',');
}

/** Raw values (defaults, then each layer in order) to typed knobs; every value is checked. */
export function resolveKnobs(...layers: ReadonlyArray<Readonly<Record<string, string>>>): {
  knobs: Knobs;
  raw: Record<string, string>;
} {
  const raw: Record<string, string> = {};
  for (const k of KNOBS) raw[k.name] = k.default;
  for (const layer of layers) {
    for (const [name, value] of Object.entries(layer)) {
      const spec = knob(name);
      if (!spec) throw new KnobError(`--${name}: no such knob (generate --list names them)`);
      raw[name] = checkKnob(spec, value);
    }
  }
  const list = (s: string) => s.split(',').filter((x) => x !== '');
  const knobs: Knobs = {
    rev: Number(raw['rev']),
    rtr: raw['rtr'] as Knobs['rtr'],
    markers: raw['markers'] as Knobs['markers'],
    crc: raw['crc'] === 'on',
    messages: list(raw['messages']!) as MessageKind[],
    count: Number(raw['count']),
    size: Number(raw['size']),
    maxUlpdu: Number(raw['max-ulpdu']),
    segmentation: raw['segmentation'] as Segmentation,
    mss: Number(raw['mss']),
    impair: list(raw['impair']!) as Impairment[],
    at: Number(raw['at']),
    ip: raw['ip'] === '6' ? 6 : 4,
    vlan: Number(raw['vlan']) < 0 ? null : Number(raw['vlan']),
    seqWrap: raw['seq-wrap'] === 'yes',
    start: raw['start'] as Knobs['start'],
    close: raw['close'] as Knobs['close'],
  };
  if (knobs.rtr !== 'none' && knobs.rev !== 2)
    throw new KnobError(`--rtr ${knobs.rtr}: an RTR is negotiated in Rev 2 only (add --rev 2)`);
  return { knobs, raw };
}
