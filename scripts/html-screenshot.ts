/**
 * `node dist/scripts/html-screenshot.js [OUT.png]`: regenerates the picture of the HTML
 * report (docs/html-report.png): the built CLI writes the report of a corpus capture, headless
 * Chromium (scripts/cdp-pipe.ts) loads it and photographs its first screens.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromiumPath, PipeBrowser } from './cdp-pipe.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** A capture with something to show: a bad CRC and an FPDUPTR mismatch, markers on. */
export const SCREENSHOT_CAPTURES = ['captures/corpus/bad-fpduptr.pcap', 'captures/corpus/bad-crc.pcap'];

async function main(): Promise<number> {
  const out = resolve(process.argv[2] ?? join(root, 'docs', 'html-report.png'));
  const exe = chromiumPath();
  if (!exe) {
    process.stderr.write('html-screenshot: chromium not found (apt-get install chromium, or set CHROMIUM)\n');
    return 2;
  }
  const dir = mkdtempSync(join(tmpdir(), 'mpa-dissect-shot-'));
  try {
    const page = join(dir, 'report.html');
    const r = spawnSync(
      process.execPath,
      [join(root, 'dist', 'cli', 'main.js'), '-q', '--html', page, ...SCREENSHOT_CAPTURES],
      { cwd: root, encoding: 'utf8' },
    );
    if (r.status !== 0 && r.status !== 1) {
      process.stderr.write(`html-screenshot: mpa-dissect failed: ${r.stderr}`);
      return 2;
    }
    const browser = PipeBrowser.launch(exe);
    try {
      const tab = await browser.newPage(1200, 900);
      await tab.goto(pathToFileURL(page).href);
      writeFileSync(out, await tab.screenshot(2400));
    } finally {
      await browser.close();
    }
    process.stdout.write(`${out}\n`);
    return 0;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then((c) => (process.exitCode = c));
