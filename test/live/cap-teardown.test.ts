/**
 * The cap binding crashes the process (SIGSEGV in Pcap::~Pcap) when the garbage collector takes
 * one of its objects, open or closed: src/capture/live/cap-source.ts keeps every one referenced.
 * Here a child process captures on lo through CapSource, stops, drops its CapSource and collects
 * garbage: it must end normally. (It crashed at the end of live runs with --junit, whose output
 * came after the capture closed and set off a collection.)
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { requireBuilt, ROOT } from '../cli/helpers.js';
import { cannotCapture } from './helpers.js';

const why = cannotCapture('cap');

describe('cap binding objects outlive the capture', () => {
  it.skipIf(why !== null)(
    `a stopped capture, then garbage collection: the process ends normally${why ? ` (skipped: ${why})` : ''}`,
    () => {
      requireBuilt();
      const src = join(ROOT, 'dist', 'src', 'capture', 'live', 'cap-source.js');
      const script = `
        const { CapSource } = await import(${JSON.stringify(src)});
        for (let i = 0; i < 3; i++) {
          let s = new CapSource({ iface: 'lo', filter: 'tcp port 9', snaplen: 1500 });
          const done = s.run({ packet() {}, started: () => s.stop() });
          await done;
          s = null;
          // A failed open too (a filter libpcap rejects).
          await new CapSource({ iface: 'lo', filter: 'not a filter (', snaplen: 1500 }).run({ packet() {} }).catch(() => {});
          for (let k = 0; k < 5; k++) { globalThis.gc(); await new Promise((r) => setTimeout(r, 10)); }
        }
        console.log('ended');
      `;
      const r = spawnSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], {
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(r.signal, r.stderr).toBe(null);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toBe('ended\n');
    },
  );
});
