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
import type { BackendChoice } from './backend-names.js';

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

/**
 * Longest capture filter (-f) handed to libpcap. Its optimiser takes time and memory that grow
 * much faster than the filter (`tcpdump -d` of N "tcp port P or" terms, measured: 3 KB 0.5 s,
 * 8 KB 6 s, 16 KB 20 s; 100 KB took 2 GB in 3 s), with every backend alike; real filters are
 * far shorter.
 */
export const MAX_CAPTURE_FILTER = 4096;

/** A -f filter past MAX_CAPTURE_FILTER: one line saying why (before any backend is started). */
export function checkCaptureFilter(filter: string): void {
  if (filter.length > MAX_CAPTURE_FILTER)
    throw new LiveCaptureError(
      `-f: the capture filter is ${filter.length} characters long, over the ${MAX_CAPTURE_FILTER} accepted: libpcap's optimiser needs time and memory growing much faster than a filter's length (16 KB takes 20 s); filter less, or with -Y after the capture`,
    );
}

export interface OpenedLive {
  source: PacketSource;
  backend: 'cap' | 'tcpdump' | 'dumpcap';
  iface: string;
}

export function openLive(choice: BackendChoice, o: LiveOptions): OpenedLive {
  checkCaptureFilter(o.filter);
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
