import type { ForcedMpaSpec, FlowSelector } from '../src/analysis/pipeline.js';

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
    if (i < 0) throw new UsageError(`--mpa: "${part}" is not key=value (keys: flow, markers, crc, seqstart, start)`);
    kv.set(part.slice(0, i).trim(), part.slice(i + 1).trim());
  }
  for (const k of kv.keys()) if (!['flow', 'markers', 'crc', 'seqstart', 'start'].includes(k)) throw new UsageError(`--mpa: unknown key "${k}" (keys: flow, markers, crc, seqstart, start)`);
  const sel = kv.get('flow') ?? 'all';
  let selector: FlowSelector;
  if (sel === 'all') selector = { kind: 'all' };
  // A number is Wireshark's tcp.stream, as the flow table shows it (0-based); flow ids count from 1.
  else if (/^\d+$/.test(sel)) selector = { kind: 'id', id: Number(sel) + 1 };
  else if (/^port:\d+$/.test(sel)) selector = { kind: 'port', port: Number(sel.slice(5)) };
  else if (/:\d+$/.test(sel)) selector = { kind: 'endpoint', endpoint: sel };
  else throw new UsageError(`--mpa: flow "${sel}" must be all, a stream number (tcp.stream), port:N or ADDR:PORT`);
  const mk = kv.get('markers') ?? 'none';
  const markers: [boolean, boolean] | undefined = ({ both: [true, true], none: [false, false], c2s: [true, false], s2c: [false, true] } as const satisfies Record<string, [boolean, boolean]>)[mk as 'both'] as [boolean, boolean] | undefined;
  if (!markers) throw new UsageError(`--mpa: markers "${mk}" must be both, none, c2s or s2c`);
  const crcS = kv.get('crc') ?? 'on';
  if (crcS !== 'on' && crcS !== 'off') throw new UsageError(`--mpa: crc "${crcS}" must be on or off`);
  let seqStart: [number | null, number | null] = [null, null];
  const ss = kv.get('seqstart');
  if (ss !== undefined) {
    const m = /^(\d*):(\d*)$/.exec(ss);
    if (!m) throw new UsageError(`--mpa: seqstart "${ss}" must be CLIENT:SERVER absolute sequence numbers (either may be empty)`);
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
      if (!m || (m[1] === '' && m[2] === '')) throw new UsageError(`--mpa: start "${st}" must be an absolute sequence number SEQ, or CLIENT:SERVER (either may be empty)`);
      const n = (s: string) => (s === '' ? null : Number(s) >>> 0);
      seqStart = [n(m[1]!), n(m[2]!)];
    }
    return { selector, markers: [...markers], crc: crcS === 'on', seqStart, prestandard: true, startAny };
  }
  return { selector, markers: [...markers], crc: crcS === 'on', seqStart };
}
