import type { ForcedMpaSpec, ForcedTufSpec, FlowSelector } from '../src/analysis/pipeline.js';
import type { UlpOverride } from '../src/analysis/ulp-registry.js';
import { ULP_IDS } from '../dissectors/ddp-rdmap/ulp-contract.js';

/** A value echoed in an error: quoted, control characters escaped, cut at 60 characters (a 100 KB value is not repeated whole). */
function echo(v: string): string {
  if (v.length <= 60) return JSON.stringify(v);
  return `${JSON.stringify(v.slice(0, 60)).slice(0, -1)}…" (${v.length} characters)`;
}

export class UsageError extends Error {}

/**
 * `key=value,key=value` into a map; an unknown key or a key given twice (`markers=both,markers=none`:
 * which one was meant?) is one line naming it.
 */
function keyValues(flag: string, text: string, keys: readonly string[]): Map<string, string> {
  const kv = new Map<string, string>();
  for (const part of text.split(',')) {
    const i = part.indexOf('=');
    if (i < 0) throw new UsageError(`${flag}: ${echo(part)} is not key=value (keys: ${keys.join(', ')})`);
    const k = part.slice(0, i).trim();
    const v = part.slice(i + 1).trim();
    if (!keys.includes(k)) throw new UsageError(`${flag}: unknown key ${echo(k)} (keys: ${keys.join(', ')})`);
    const before = kv.get(k);
    if (before !== undefined)
      throw new UsageError(`${flag}: ${k} is given twice (${echo(before)}, then ${echo(v)}): give it once`);
    kv.set(k, v);
  }
  return kv;
}

/** A TCP sequence number as typed: digits, at most 2^32-1 (a larger one would wrap silently). */
function seq32(s: string): number | null {
  return /^\d{1,10}$/.test(s) && Number(s) <= 0xffffffff ? Number(s) : null;
}

/**
 * `--mpa flow=SEL[,markers=both|none|c2s|s2c][,crc=on|off][,seqstart=C:S][,start=SEQ|C:S]`
 * `start=` says MPA was enabled there without startup frames (pre-standard, draft-00 marker rules);
 * a bare SEQ applies to the direction whose octets hold it, the other direction's start is found by
 * its zero marker.
 * SEL: `all`, a stream number (tcp.stream, as the flow table shows it), `port:N`, or an endpoint `ADDR:PORT` (IPv6 in brackets).
 */
export function parseForcedMpa(text: string): ForcedMpaSpec {
  const kv = keyValues('--mpa', text, ['flow', 'markers', 'crc', 'seqstart', 'start']);
  const selector = parseSelector('--mpa', kv.get('flow') ?? 'all');
  const mk = kv.get('markers') ?? 'none';
  const markers: [boolean, boolean] | undefined = (
    { both: [true, true], none: [false, false], c2s: [true, false], s2c: [false, true] } as const satisfies Record<
      string,
      [boolean, boolean]
    >
  )[mk as 'both'] as [boolean, boolean] | undefined;
  if (!markers) throw new UsageError(`--mpa: markers ${echo(mk)} must be both, none, c2s or s2c`);
  const crcS = kv.get('crc') ?? 'on';
  if (crcS !== 'on' && crcS !== 'off') throw new UsageError(`--mpa: crc ${echo(crcS)} must be on or off`);
  let seqStart: [number | null, number | null] = [null, null];
  const ss = kv.get('seqstart');
  if (ss !== undefined) {
    const m = /^(\d*):(\d*)$/.exec(ss);
    const n = (s: string) => (s === '' ? null : seq32(s));
    if (!m || (m[1] !== '' && n(m[1]!) === null) || (m[2] !== '' && n(m[2]!) === null))
      throw new UsageError(
        `--mpa: seqstart ${echo(ss)} must be CLIENT:SERVER absolute sequence numbers from 0 to 4294967295 (either may be empty)`,
      );
    seqStart = [n(m[1]!), n(m[2]!)];
  }
  const st = kv.get('start');
  let startAny: number | null = null;
  if (st !== undefined) {
    if (ss !== undefined) throw new UsageError(`--mpa: give start= or seqstart=, not both`);
    const bad = () =>
      new UsageError(
        `--mpa: start ${echo(st)} must be an absolute sequence number SEQ from 0 to 4294967295, or CLIENT:SERVER (either may be empty)`,
      );
    if (/^\d+$/.test(st)) {
      startAny = seq32(st);
      if (startAny === null) throw bad();
    } else {
      const m = /^(\d*):(\d*)$/.exec(st);
      const n = (s: string) => (s === '' ? null : seq32(s));
      if (!m || (m[1] === '' && m[2] === '')) throw bad();
      seqStart = [n(m[1]!), n(m[2]!)];
      if ((m[1] !== '' && seqStart[0] === null) || (m[2] !== '' && seqStart[1] === null)) throw bad();
    }
    return { selector, markers: [...markers], crc: crcS === 'on', seqStart, prestandard: true, startAny };
  }
  return { selector, markers: [...markers], crc: crcS === 'on', seqStart };
}

/**
 * `--tuf [flow=SEL,]key=HEX|interval=N[,start=SEQ]`: ULP Framing for TCP forced on a flow
 * (draft-ietf-tsvwg-tcp-ulp-frame-00). key=HEX (12 hex digits, "0x" allowed) chooses PDU alignment
 * mode, interval=N marker mode. key and start take one value for both directions or C:S (either
 * may be empty); a start is used by the direction whose captured stream it falls in.
 */
export function parseForcedTuf(text: string): ForcedTufSpec {
  const kv = keyValues('--tuf', text, ['flow', 'key', 'interval', 'start']);
  const selector = parseSelector('--tuf', kv.get('flow') ?? 'all');
  const pair = <T>(name: string, v: string | undefined, one: (s: string) => T): [T | null, T | null] => {
    if (v === undefined) return [null, null];
    const m = /^([^:]*):([^:]*)$/.exec(v);
    if (!m) return [one(v), one(v)];
    const p = (s: string) => (s === '' ? null : one(s));
    const out: [T | null, T | null] = [p(m[1]!), p(m[2]!)];
    if (out[0] === null && out[1] === null) throw new UsageError(`--tuf: ${name} ${echo(v)} names neither direction`);
    return out;
  };
  const key = pair('key', kv.get('key'), (s) => {
    const h = s.replace(/^0x/i, '');
    if (!/^[0-9a-fA-F]{1,12}$/.test(h))
      throw new UsageError(`--tuf: key ${echo(s)} must be the 48-bit framing key as up to 12 hex digits`);
    return parseInt(h, 16);
  });
  const start = pair('start', kv.get('start'), (s) => {
    const n = seq32(s);
    if (n === null)
      throw new UsageError(`--tuf: start ${echo(s)} must be an absolute TCP sequence number from 0 to 4294967295`);
    return n;
  });
  const iv = kv.get('interval');
  let interval: number | null = null;
  if (iv !== undefined) {
    if (!/^\d+$/.test(iv) || Number(iv) < 8 || Number(iv) > 65536)
      throw new UsageError(`--tuf: interval ${echo(iv)} must be the marker period in octets (8 to 65536)`);
    interval = Number(iv);
  }
  const hasKey = key[0] !== null || key[1] !== null;
  if (hasKey && interval !== null)
    throw new UsageError('--tuf: key= is PDU alignment mode, interval= marker mode; give one of them');
  if (!hasKey && interval === null)
    throw new UsageError('--tuf: give key=HEX (PDU alignment mode) or interval=N (marker mode)');
  return { selector, tuf: { mode: hasKey ? 'alignment' : 'markers', key, interval, start } };
}

/** The upper layers `--ulp proto=` names (and `none`). */
export const ULP_PROTOS: readonly string[] = [...ULP_IDS, 'none'];

/**
 * `--ulp [flow=SEL,]proto=smb-direct|rpc-rdma|iser|none` (ULP_PROTOS): the upper layer decoded above RDMAP on the
 * flows SEL names, as Wireshark's Decode As (none: no upper layer at all there).
 */
export function parseUlp(text: string): UlpOverride {
  const kv = keyValues('--ulp', text, ['flow', 'proto']);
  const proto = kv.get('proto');
  if (proto === undefined) throw new UsageError(`--ulp: give proto=${ULP_PROTOS.join('|')}`);
  if (!ULP_PROTOS.includes(proto))
    throw new UsageError(`--ulp: proto ${echo(proto)} must be one of ${ULP_PROTOS.join(', ')}`);
  return { selector: parseSelector('--ulp', kv.get('flow') ?? 'all'), proto: proto as UlpOverride['proto'] };
}

function parseSelector(flag: string, sel: string): FlowSelector {
  if (sel === 'all') return { kind: 'all' };
  // A number is Wireshark's tcp.stream, as the flow table shows it (0-based); flow ids count from 1.
  if (/^\d{1,15}$/.test(sel)) return { kind: 'id', id: Number(sel) + 1 };
  // A port past 65535 could never match: one line rather than a selector silently ignored.
  const port = /(?:^port|\]|[^:]):(\d+)$/.exec(sel);
  if (port && (port[1]!.length > 5 || Number(port[1]) > 65535))
    throw new UsageError(`${flag}: flow ${echo(sel)}: port ${echo(port[1]!)} is not a TCP port (0 to 65535)`);
  if (/^port:\d+$/.test(sel)) return { kind: 'port', port: Number(sel.slice(5)) };
  if (/:\d+$/.test(sel)) return { kind: 'endpoint', endpoint: sel };
  throw new UsageError(`${flag}: flow ${echo(sel)} must be all, a stream number (tcp.stream), port:N or ADDR:PORT`);
}

/** A selector as typed (for messages): `all`, the stream number, `port:N` or the endpoint. */
export function selectorText(sel: FlowSelector): string {
  switch (sel.kind) {
    case 'all':
      return 'all';
    case 'id':
      return String(sel.id - 1);
    case 'port':
      return `port:${sel.port}`;
    case 'endpoint':
      return sel.endpoint;
  }
}
