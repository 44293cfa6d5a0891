/**
 * `mpa-dissect tui --help` (issue 22): the options tui takes and every key, from the key table the
 * `?` overlay shows; none of the batch options tui refuses.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { CLI, requireBuilt } from '../cli/helpers.js';
import { KEYS } from '../../src/tui/keys.js';
import { helpLines } from '../../src/tui/overlays.js';
import { lineText } from '../../src/tui/lines.js';

describe('mpa-dissect tui --help', () => {
  beforeAll(() => requireBuilt());
  const run = (...args: string[]) => spawnSync(process.execPath, [CLI, 'tui', ...args], { encoding: 'utf8' });

  it('prints the tui options and every key, exit 0, within 80 columns', () => {
    for (const flag of ['--help', '-h']) {
      const r = run(flag);
      expect(r.status).toBe(0);
      expect(r.stderr).toBe('');
      const keys = r.stdout.slice(r.stdout.indexOf('\nKeys:\n'));
      for (const k of KEYS) expect(keys).toContain(`  ${k.keys} `);
      for (const o of ['-Y, --display-filter', '--mpa', '--rules', '-i IFACE']) expect(r.stdout).toContain(o);
      for (const l of r.stdout.split('\n')) expect(Array.from(l).length).toBeLessThanOrEqual(80);
    }
  });

  it('lists none of the batch options tui refuses', () => {
    const r = run('--help');
    for (const o of ['--json', '--ndjson', '--junit', '-V,', '--write-filter', '--annotate', '-z'])
      expect(r.stdout).not.toMatch(new RegExp(`^\\s+${o.replace(/[-,]/g, (c) => `\\${c}`)}`, 'm'));
    expect(r.stdout).toMatch(/batch\s+outputs/);
  });

  it('with a capture after it, still the help (not the UI)', () => {
    const r = run('captures/errors.pcap', '--help');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^mpa-dissect tui \[options\] CAPTURE/);
  });

  it('the key descriptions are those of the ? overlay (one table)', () => {
    const r = run('--help');
    const flat = (s: string) => s.replace(/\s+/g, ' ');
    const overlay = flat(helpLines(80).map(lineText).join(' '));
    for (const k of KEYS) {
      expect(flat(r.stdout)).toContain(flat(`${k.keys} ${k.does}`).replace(/ +/g, ' '));
      expect(overlay).toContain(flat(k.does));
    }
  });
});
