/**
 * What a live capture says when it cannot start: one line, exit 2, never a stack trace. No
 * permission (an unprivileged user: the message says how to grant CAP_NET_RAW), an unknown
 * interface (the message lists those that exist), no backend at all (what to install), a capture
 * filter libpcap rejects, capture options without -i.
 */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { dirname } from 'node:path';
import { CLI, cli } from '../cli/helpers.js';
import { cannotCapture } from './helpers.js';

function oneLine(stderr: string): void {
  expect(stderr).not.toMatch(/\n\s+at /);
  expect(stderr.trim().split('\n')).toHaveLength(1);
}

const NOBODY = ['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups'];

/** Why nobody cannot run the CLI here (not root to switch, no setpriv, dist/ or node not readable), or null. */
function nobodyCannotRun(): string | null {
  if (process.getuid?.() !== 0) return 'not root: cannot switch to nobody';
  const probe = spawnSync(
    NOBODY[0]!,
    [
      ...NOBODY.slice(1),
      process.execPath,
      '-e',
      `require('fs').accessSync(${JSON.stringify(CLI)}, require('fs').constants.R_OK); require('fs').readdirSync(${JSON.stringify(dirname(CLI))})`,
    ],
    { encoding: 'utf8' },
  );
  if (probe.error) return `setpriv is not available (${probe.error.message})`;
  if (probe.status !== 0) return `nobody cannot read ${CLI} (${probe.stderr.trim().split('\n')[0]})`;
  return null;
}

describe('live capture errors', () => {
  it('an unknown interface: one line listing the interfaces that exist', () => {
    const r = cli(['-i', 'nosuch0', '-c', '1']);
    expect(r.code).toBe(2);
    oneLine(r.stderr);
    expect(r.stderr).toMatch(
      /^mpa-dissect: -i nosuch0: no such interface; the interfaces are: .*\blo\b.*\(mpa-dissect -D lists them\)/,
    );
  });

  it('-D lists the interfaces, numbered, lo among them; -i takes the number too', () => {
    const r = cli(['-D']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^1\. \S+/);
    const lo = /^(\d+)\. lo\b/m.exec(r.stdout);
    expect(lo).not.toBeNull();
    const bad = cli(['-i', '999', '-c', '1']);
    expect(bad.stderr).toMatch(/-i 999: no such interface/);
  });

  it('no backend (no cap binding, no tcpdump, no dumpcap): one line saying what to install', () => {
    const r = cli(['-i', 'lo', '-c', '1'], { env: { MPA_DISSECT_NO_CAP: '1', PATH: '/nonexistent' } });
    expect(r.code).toBe(2);
    oneLine(r.stderr);
    expect(r.stderr).toBe(
      'mpa-dissect: -i: no capture backend available: install tcpdump (apt-get install tcpdump), or libpcap for the built-in binding (apt-get install libpcap-dev && npm rebuild cap)\n',
    );
  });

  it('capture options without -i are usage errors', () => {
    for (const args of [
      ['-f', 'tcp'],
      ['-a', 'duration:1'],
      ['-b', 'filesize:1'],
      ['-s', '100'],
    ]) {
      const r = cli([...args, 'sample.pcap']);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/is a capture option: use it with -i IFACE/);
    }
    expect(cli(['-i', 'lo', '-b', 'filesize:1']).stderr).toMatch(/-b needs -w FILE/);
    expect(cli(['-i', 'lo', '-a', 'minutes:3']).stderr).toMatch(
      /-a: "minutes:3" is not duration:SECONDS or packets:COUNT/,
    );
    expect(cli(['-i', 'lo', 'sample.pcap']).stderr).toMatch(
      /captures live; a capture file \(sample.pcap\) cannot be read at the same time/,
    );
  });

  for (const backend of ['cap', 'tcpdump'] as const) {
    const why = cannotCapture(backend);
    it.skipIf(why !== null)(
      `a filter libpcap rejects (${backend}): one line naming -f${why ? ` (skipped: ${why})` : ''}`,
      () => {
        const r = cli(['-i', 'lo', '--capture-backend', backend, '-f', 'tcp porrt 1', '-c', '1']);
        expect(r.code).toBe(2);
        oneLine(r.stderr);
        expect(r.stderr).toMatch(/^mpa-dissect: -f "tcp porrt 1": .*syntax error/);
      },
    );

    const nobody = why ?? nobodyCannotRun();
    it.skipIf(nobody !== null)(
      `as an unprivileged user (${backend}): the permission message and how to grant CAP_NET_RAW${nobody ? ` (skipped: ${nobody})` : ''}`,
      () => {
        const r = spawnSync(
          NOBODY[0]!,
          [...NOBODY.slice(1), process.execPath, CLI, '-i', 'lo', '--capture-backend', backend, '-a', 'duration:5'],
          {
            encoding: 'utf8',
            cwd: '/',
            env: { PATH: process.env['PATH'] ?? '', NO_COLOR: '1' },
            timeout: 30_000,
          },
        );
        expect(r.status).toBe(2);
        oneLine(r.stderr);
        expect(r.stderr).toMatch(
          /^mpa-dissect: -i lo: no permission to capture \(.*\): run as root, or grant CAP_NET_RAW once with sudo setcap cap_net_raw,cap_net_admin=eip /,
        );
        expect(r.stderr).toContain(backend === 'cap' ? 'command -v node' : 'command -v tcpdump');
      },
    );
  }
});
