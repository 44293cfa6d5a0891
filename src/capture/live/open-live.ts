/**
 * Picks the live-capture backend (`--capture-backend auto|cap|tcpdump|dumpcap`) and checks the
 * interface before anything starts. auto: the cap binding when it loads, else tcpdump, else dumpcap.
 */
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { capLoadError, loadCap } from './cap-binding.js';
import { CapSource, type LiveOptions } from './cap-source.js';
import { ChildSource } from './child-source.js';
import { LiveCaptureError, noBackendError, unknownInterfaceError } from './errors.js';
import { listInterfaces, resolveInterface } from './interfaces.js';
import type { PacketSource } from './packet-source.js';

export const BACKENDS = ['auto', 'cap', 'tcpdump', 'dumpcap'] as const;
export type BackendChoice = (typeof BACKENDS)[number];

/** Is `tool` an executable on PATH (or in the sbin directories tcpdump often lives in)? */
export function onPath(tool: string): boolean {
  const dirs = [...(process.env['PATH'] ?? '').split(delimiter)].filter((d) => d !== '');
  for (const d of dirs) {
    try {
      accessSync(join(d, tool), constants.X_OK);
      return true;
    } catch {
      // next
    }
  }
  return false;
}

export interface OpenedLive {
  source: PacketSource;
  backend: 'cap' | 'tcpdump' | 'dumpcap';
  iface: string;
}

export function openLive(choice: BackendChoice, o: LiveOptions): OpenedLive {
  let backend: OpenedLive['backend'];
  if (choice === 'auto') {
    if (loadCap()) backend = 'cap';
    else if (onPath('tcpdump')) backend = 'tcpdump';
    else if (onPath('dumpcap')) backend = 'dumpcap';
    else throw noBackendError();
  } else if (choice === 'cap') {
    if (!loadCap())
      throw new LiveCaptureError(
        `--capture-backend cap: the cap binding does not load (${capLoadError()}): apt-get install libpcap-dev && npm rebuild cap, or use --capture-backend tcpdump`,
      );
    backend = 'cap';
  } else {
    if (!onPath(choice))
      throw new LiveCaptureError(
        `--capture-backend ${choice}: ${choice} is not installed (apt-get install ${choice === 'tcpdump' ? 'tcpdump' : 'wireshark-common'})`,
      );
    backend = choice;
  }
  const list = listInterfaces();
  const iface = resolveInterface(o.iface, list);
  if (iface === null)
    throw unknownInterfaceError(
      o.iface,
      list.map((d) => d.name),
    );
  const opts = { ...o, iface };
  return { source: backend === 'cap' ? new CapSource(opts) : new ChildSource(backend, opts), backend, iface };
}
