/**
 * The interfaces a capture can use (`-D`, and the list in the "no such interface" message):
 * libpcap's own list through cap when it loads, else `tcpdump -D`, else /sys/class/net.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { loadCap } from './cap-binding.js';

export interface InterfaceInfo {
  name: string;
  description: string | null;
  loopback: boolean;
}

export function listInterfaces(): InterfaceInfo[] {
  const cap = loadCap();
  if (cap) {
    try {
      return cap.Cap.deviceList().map((d) => ({
        name: d.name,
        description: d.description ?? null,
        loopback: /LOOPBACK/.test(d.flags ?? ''),
      }));
    } catch {
      // fall through to tcpdump
    }
  }
  for (const tool of ['tcpdump', 'dumpcap']) {
    const r = spawnSync(tool, ['-D'], { encoding: 'utf8', timeout: 10_000 });
    if (r.status === 0 && r.stdout) {
      const out: InterfaceInfo[] = [];
      for (const l of r.stdout.split('\n')) {
        // "3.lo [Up, Running, Loopback]" or "2. any (Pseudo-device ...)" (dumpcap)
        const m = /^\d+\.\s*(\S+)(?:\s+\(([^)]*)\))?(.*)$/.exec(l.trim());
        if (m) out.push({ name: m[1]!, description: m[2] ?? null, loopback: /Loopback/.test(m[3] ?? '') });
      }
      if (out.length) return out;
    }
  }
  try {
    const names = readdirSync('/sys/class/net');
    return [
      ...names.map((n) => ({ name: n, description: null, loopback: n === 'lo' })),
      { name: 'any', description: 'Pseudo-device that captures on all interfaces', loopback: false },
    ];
  } catch {
    return [];
  }
}

/** tshark -D's lines: "1. eth0", "3. lo (Loopback)". */
export function interfacesText(list: readonly InterfaceInfo[]): string {
  return list
    .map((d, i) => `${i + 1}. ${d.name}${d.description ? ` (${d.description})` : d.loopback ? ' (Loopback)' : ''}`)
    .join('\n');
}

/**
 * The interface `-i` names: a name from the list, or (as tshark) its number in the -D list.
 * Null when it is neither (the caller lists the ones that exist). An empty list means the system
 * could not be asked: the name is taken as given and the backend will say.
 */
export function resolveInterface(arg: string, list: readonly InterfaceInfo[]): string | null {
  if (list.length === 0) return arg;
  if (list.some((d) => d.name === arg)) return arg;
  if (/^\d+$/.test(arg)) {
    const d = list[Number(arg) - 1];
    return d ? d.name : null;
  }
  return null;
}
