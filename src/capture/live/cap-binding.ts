/**
 * The `cap` libpcap binding, an optional dependency loaded lazily: `npm install` succeeds without
 * libpcap headers or a compiler, and only `-i` with the cap backend needs it.
 * MPA_DISSECT_NO_CAP=1 pretends it is not installed (tests of the tcpdump fallback).
 */
import { createRequire } from 'node:module';

export interface CapDevice {
  name: string;
  description?: string;
  addresses: Array<{ addr: string }>;
  flags?: string;
}

/** The part of cap's Cap object we use (cap/src/binding.cc). */
export interface CapHandle {
  /** Opens the device and starts capturing; returns the link type name. Throws libpcap's error text. */
  open(device: string, filter: string, bufSize: number, buffer: Buffer): string;
  close(): void;
  on(event: 'packet', fn: (nbytes: number, truncated: boolean) => void): void;
  removeAllListeners(event?: string): void;
}

export interface CapModule {
  Cap: { new (): CapHandle; deviceList(): CapDevice[] };
}

let loaded: CapModule | null | undefined;
let loadError = '';

/** The binding, or null when it is not installed or its native part does not load. */
export function loadCap(): CapModule | null {
  if (loaded !== undefined) return loaded;
  if (process.env['MPA_DISSECT_NO_CAP']) {
    loadError = 'MPA_DISSECT_NO_CAP is set';
    return (loaded = null);
  }
  try {
    const req = createRequire(import.meta.url);
    loaded = req('cap') as CapModule;
  } catch (e) {
    loadError = e instanceof Error ? e.message.split('\n')[0]! : String(e);
    loaded = null;
  }
  return loaded;
}

/** Why loadCap() returned null (for --capture-backend cap). */
export function capLoadError(): string {
  return loadError;
}
