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
 * `--mpa flow=SEL[,markers=both|none|c2s|s2c][,crc=on|off][,seqstart=C:S][,start=SEQ|C:S]`
 * `start=` says MPA was enabled there without startup frames (pre-standard, draft-00 marker rules);
 * a bare SEQ applies to the direction whose octets hold it, the other direction's start is found by
 * its zero marker.
 * SEL: `all`, a stream number (tcp.stream, as the flow table shows it), `port:N`, or an endpoint `ADDR:PORT` (IPv6 in brackets).
 */
export function parseForcedMpa(text: string): ForcedMpaSpec {
  const kv = new Map<string, string>();
  for (const part of text.split(',')) {
    const i = part.indexOf('=');
    if (i < 0)
      throw new UsageError(`--mpa: ${echo(part)} is not key=value (keys: flow, markers, crc, seqstart, start)`);
    kv.set(part.slice(0, i).trim(), part.slice(i + 1).trim());
  }
  for (const k of kv.keys())
    if (!['flow', 'markers', 'crc', 'seqstart', 'start'].includes(k))
      throw new UsageError(`--mpa: unknown key ${echo(k)} (keys: flow, markers, crc, seqstart, start)`);
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
    if (!m)
      throw new UsageError(
        `--mpa: seqstart ${echo(ss)} must be CLIENT:SERVER absolute sequence numbers (either may be empty)`,
      );
    const n = (s: string) => (s === '' ? null : Number(s) >>> 0);
    seqStart = [n(m[1]!), n(m[2]!)];
  }
  const st = kv.get('start');
  let startAny: number | null = null;
  if (st !== undefined) {
    if (ss !== undefined) throw new UsageError(`--mpa: give start= or seqstart=, not both`);
    if (/^\d+$/.test(st)) startAny = Number(st) >>> 0;
    else {
      const m = /^(\d*):(\d*)$/.exec(st);
      if (!m || (m[1] === '' && m[2] === ''))
        throw new UsageError(
          `--mpa: start ${echo(st)} must be an absolute sequence number SEQ, or CLIENT:SERVER (either may be empty)`,
        );
      const n = (s: string) => (s === '' ? null : Number(s) >>> 0);
      seqStart = [n(m[1]!), n(m[2]!)];
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
  const keys = ['flow', 'key', 'interval', 'start'];
  const kv = new Map<string, string>();
  for (const part of text.split(',')) {
    const i = part.indexOf('=');
    if (i < 0) throw new UsageError(`--tuf: ${echo(part)} is not key=value (keys: ${keys.join(', ')})`);
    kv.set(part.slice(0, i).trim(), part.slice(i + 1).trim());
  }
  for (const k of kv.keys())
    if (!keys.includes(k)) throw new UsageError(`--tuf: unknown key ${echo(k)} (keys: ${keys.join(', ')})`);
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
    if (!/^\d+$/.test(s) || Number(s) > 0xffffffff)
      throw new UsageError(`--tuf: start ${echo(s)} must be an absolute TCP sequence number`);
    return Number(s) >>> 0;
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
  const keys = ['flow', 'proto'];
  const kv = new Map<string, string>();
  for (const part of text.split(',')) {
    const i = part.indexOf('=');
    if (i < 0) throw new UsageError(`--ulp: ${echo(part)} is not key=value (keys: ${keys.join(', ')})`);
    kv.set(part.slice(0, i).trim(), part.slice(i + 1).trim());
  }
  for (const k of kv.keys())
    if (!keys.includes(k)) throw new UsageError(`--ulp: unknown key ${echo(k)} (keys: ${keys.join(', ')})`);
  const proto = kv.get('proto');
  if (proto === undefined) throw new UsageError(`--ulp: give proto=${ULP_PROTOS.join('|')}`);
  if (!ULP_PROTOS.includes(proto))
    throw new UsageError(`--ulp: proto ${echo(proto)} must be one of ${ULP_PROTOS.join(', ')}`);
  return { selector: parseSelector('--ulp', kv.get('flow') ?? 'all'), proto: proto as UlpOverride['proto'] };
}

function parseSelector(flag: string, sel: string): FlowSelector {
  if (sel === 'all') return { kind: 'all' };
  // A number is Wireshark's tcp.stream, as the flow table shows it (0-based); flow ids count from 1.
  if (/^\d+$/.test(sel)) return { kind: 'id', id: Number(sel) + 1 };
  if (/^port:\d+$/.test(sel)) return { kind: 'port', port: Number(sel.slice(5)) };
  if (/:\d+$/.test(sel)) return { kind: 'endpoint', endpoint: sel };
  throw new UsageError(`${flag}: flow ${echo(sel)} must be all, a stream number (tcp.stream), port:N or ADDR:PORT`);
}
