/**
 * `--html FILE` from the command line, without a browser: written beside the other outputs for
 * one capture, several captures (one page) and standard input; a bad path is one line and exit 2;
 * text from the capture is escaped. The browser tests are html-browser.test.ts.
 */
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReportDocument } from '../../../src/report/json-report.js';
import { CAPTURES, cli } from '../../cli/helpers.js';

const corpus = (name: string): string => join(CAPTURES, 'corpus', name);
const BAD_CRC = corpus('bad-crc.pcap');
const MARKERS = corpus('markers.pcap');

/** The flows listed in each capture section, in order, by flow id. */
function sectionFlows(html: string): number[][] {
  return html
    .split('<section class="capture"')
    .slice(1)
    .map((s) => [...s.matchAll(/<tr data-flow="(\d+)"/g)].map((m) => Number(m[1])));
}

function json(args: string[], input?: Uint8Array): ReportDocument {
  const r = cli(['--json', ...args], input ? { input } : {});
  return JSON.parse(r.stdout) as ReportDocument;
}

describe('--html', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'html-cli-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('one capture: the page is written beside the text output, which is unchanged', () => {
    const page = join(dir, 'one.html');
    const plain = cli(['-q', BAD_CRC]);
    const r = cli(['-q', '--html', page, BAD_CRC]);
    expect(r.stdout).toBe(plain.stdout);
    expect(r.code).toBe(plain.code);
    const html = readFileSync(page, 'utf8');
    expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
    const doc = json([BAD_CRC]);
    expect(sectionFlows(html)).toEqual([doc.flows.map((f) => f.id)]);
    expect(html).toContain(`data-exit="${plain.code}"`);
    // Self-contained: no URL to fetch anything from.
    expect(html).not.toMatch(/\b(src|href)="(?!#)/);
    expect(html).not.toMatch(/https?:\/\//);
  });

  it('several captures: one page, an overview row and a section per capture, in the order given', () => {
    const page = join(dir, 'multi.html');
    const junk = join(dir, 'junk.pcap');
    writeFileSync(junk, 'not a capture');
    const r = cli(['-q', '--html', page, BAD_CRC, MARKERS, junk]);
    expect(r.code).toBe(2);
    const html = readFileSync(page, 'utf8');
    const overview = [...html.matchAll(/<tr><td><a href="#capture-(\d+)">([^<]*)<\/a>.*?data-v="(\d)"[^>]*>exit/g)].map(
      (m) => [m[2], Number(m[3])],
    );
    const alone = [BAD_CRC, MARKERS, junk].map((c) => cli(['-q', c]).code);
    expect(overview).toEqual([
      [BAD_CRC, alone[0]],
      [MARKERS, alone[1]],
      [junk, 2],
    ]);
    const flows = sectionFlows(html);
    expect(flows.slice(0, 2)).toEqual([BAD_CRC, MARKERS].map((c) => json([c]).flows.map((f) => f.id)));
    expect(flows[2]).toEqual([]);
    expect(html).toMatch(/class="verdict fatal" data-exit="2"><b>exit 2<\/b> the capture could not be read/);
  });

  it('standard input: cat x.pcap | mpa-dissect - --html r.html', () => {
    const page = join(dir, 'stdin.html');
    const bytes = readFileSync(MARKERS);
    const r = cli(['-', '-q', '--html', page], { input: bytes });
    expect(r.stderr).toBe('');
    const html = readFileSync(page, 'utf8');
    expect(html).toContain('<h2>&lt;standard input&gt;</h2>');
    expect(sectionFlows(html)).toEqual([json([MARKERS]).flows.map((f) => f.id)]);
  });

  it('with --json on standard output: the JSON is unchanged and the page describes the same run', () => {
    const page = join(dir, 'json.html');
    const a = cli(['--json', BAD_CRC]);
    const b = cli(['--json', '--html', page, BAD_CRC]);
    expect(b.stdout).toBe(a.stdout);
    const doc = JSON.parse(b.stdout) as ReportDocument;
    const html = readFileSync(page, 'utf8');
    for (const f of doc.findings) expect(html).toContain(`data-rule="${f.rule}"`);
    expect([...html.matchAll(/<tr class="finding"/g)].length).toBe(doc.findings.length);
    // Each direction's findings time line names the first finding its sender caused (hover text).
    const directions = html.split('<div class="direction"').slice(1);
    for (const f of doc.findings.filter((x) => x.from !== null)) {
      const dir = directions.find((d) => d.includes(`<h5>${f.from} →`));
      const first = doc.findings.find((x) => x.from === f.from && x.flow === f.flow)!;
      expect(dir).toContain(`first ${first.rule}: frame ${first.frames[0]}, seq ${first.seq}`);
    }
  });

  it('--threads 2: the same page as one thread (but for its time of writing)', () => {
    const pages = ['1', '2'].map((n) => {
      const page = join(dir, `threads-${n}.html`);
      cli(['-q', '--threads', n, '--ulp', 'flow=all,proto=none', '--html', page, corpus('bad-fpduptr.pcap')]);
      return readFileSync(page, 'utf8').replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/, '');
    });
    expect(pages[1]).toBe(pages[0]);
  });

  it('an unwritable path: one line and exit 2, before the capture is read', () => {
    for (const [path, why] of [
      [join(dir, 'no', 'such', 'dir', 'r.html'), 'no such file or directory'],
      [dir, 'is a directory'],
    ] as const) {
      const r = cli(['-q', '--html', path, BAD_CRC]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(`mpa-dissect: --html ${path}: cannot write: ${why}\n`);
    }
    const multi = cli(['-q', '--html', join(dir, 'nope', 'r.html'), BAD_CRC, MARKERS]);
    expect(multi.code).toBe(2);
    expect(multi.stderr.trim().split('\n')).toHaveLength(1);
    const none = cli(['--html']);
    expect(none.code).toBe(2);
    expect(none.stderr.trim().split('\n')).toHaveLength(1);
    const self = cli(['-q', '--html', BAD_CRC, BAD_CRC]);
    expect(self.code).toBe(2);
    expect(self.stderr).toMatch(/^mpa-dissect: --html .*: that is the capture being read; choose another file\n$/);
  });

  it('text from the capture is escaped: a capture named <script> is shown, never run', () => {
    const evil = join(dir, 'evil');
    if (!existsSync(evil)) mkdirSync(evil);
    // A file name cannot hold "/", so no closing tag: the opening one is enough to run if unescaped.
    const name = join(evil, `<script>alert("x")<img src=x onerror=alert(1)>'.pcap`);
    symlinkSync(BAD_CRC, name);
    const page = join(dir, 'evil.html');
    cli(['-q', '--html', page, name]);
    const html = readFileSync(page, 'utf8');
    expect(html).not.toContain('<script>alert');
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;img src=x onerror=alert(1)&gt;&#39;.pcap');
    expect(html.match(/<script/g)).toHaveLength(1); // the page's own
  });
});
