/**
 * A headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`:
 * JSON messages separated by NUL, the browser reading descriptor 3 and writing descriptor 4).
 * No dependency (no puppeteer download, no WebSocket, no port to find): enough for the HTML
 * report's tests and its screenshot script to load a page, watch its console, exceptions and
 * network requests, run a line of script in it, move the mouse and take a screenshot.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';

/** Where Debian's chromium package puts the browser (CHROMIUM overrides). */
export function chromiumPath(): string | null {
  const candidates = [process.env['CHROMIUM'], '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter(
    (x): x is string => typeof x === 'string' && x !== '',
  );
  return candidates.find((c) => existsSync(c)) ?? null;
}

type Json = Record<string, unknown>;

interface Pending {
  resolve: (v: Json) => void;
  reject: (e: Error) => void;
  method: string;
}

export class PipeBrowser {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly listeners: Array<(method: string, params: Json, sessionId: string | undefined) => void> = [];
  private buf = '';
  private closed = false;

  private constructor(
    private readonly child: ChildProcess,
    private readonly toBrowser: Writable,
    fromBrowser: Readable,
    private readonly profile: string,
  ) {
    fromBrowser.setEncoding('utf8');
    fromBrowser.on('data', (s: string) => this.receive(s));
    child.on('exit', () => {
      this.closed = true;
      for (const p of this.pending.values()) p.reject(new Error(`chromium exited during ${p.method}`));
      this.pending.clear();
    });
  }

  static launch(exe: string): PipeBrowser {
    const profile = mkdtempSync(join(tmpdir(), 'mpa-dissect-chromium-'));
    const child = spawn(
      exe,
      [
        '--headless',
        '--remote-debugging-pipe',
        '--no-sandbox', // root in a container: the sandbox cannot start
        '--disable-gpu',
        '--no-first-run',
        '--no-default-browser-check',
        '--disable-extensions',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--hide-scrollbars',
        `--user-data-dir=${profile}`,
        'about:blank',
      ],
      { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'] },
    );
    return new PipeBrowser(child, child.stdio[3] as Writable, child.stdio[4] as Readable, profile);
  }

  private receive(s: string): void {
    this.buf += s;
    let nul: number;
    while ((nul = this.buf.indexOf('\0')) >= 0) {
      const msg = JSON.parse(this.buf.slice(0, nul)) as Json;
      this.buf = this.buf.slice(nul + 1);
      if (typeof msg['id'] === 'number') {
        const p = this.pending.get(msg['id']);
        if (!p) continue;
        this.pending.delete(msg['id']);
        const err = msg['error'] as { message?: string } | undefined;
        if (err) p.reject(new Error(`${p.method}: ${err.message ?? JSON.stringify(err)}`));
        else p.resolve((msg['result'] as Json) ?? {});
      } else if (typeof msg['method'] === 'string') {
        for (const l of this.listeners)
          l(msg['method'], (msg['params'] as Json) ?? {}, msg['sessionId'] as string | undefined);
      }
    }
  }

  send(method: string, params: Json = {}, sessionId?: string): Promise<Json> {
    if (this.closed) return Promise.reject(new Error(`chromium is not running (${method})`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, method });
      this.toBrowser.write(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }) + '\0');
    });
  }

  on(l: (method: string, params: Json, sessionId: string | undefined) => void): void {
    this.listeners.push(l);
  }

  /** A new tab, attached, with the domains the tests watch enabled. */
  async newPage(width = 1280, height = 900): Promise<Page> {
    const { targetId } = (await this.send('Target.createTarget', { url: 'about:blank' })) as { targetId: string };
    const { sessionId } = (await this.send('Target.attachToTarget', { targetId, flatten: true })) as {
      sessionId: string;
    };
    const page = new Page(this, sessionId);
    await Promise.all(['Page.enable', 'Runtime.enable', 'Log.enable', 'Network.enable'].map((m) => page.send(m)));
    await page.send('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: 1, mobile: false });
    return page;
  }

  async close(): Promise<void> {
    if (!this.closed) {
      const exited = new Promise<void>((r) => this.child.once('exit', () => r()));
      this.send('Browser.close').catch(() => undefined);
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(this.profile, { recursive: true, force: true });
  }
}

export class Page {
  /** Console errors and warnings, uncaught exceptions, log entries of level error (CSP violations among them). */
  readonly problems: string[] = [];
  /** URLs the page requested (its own document included). */
  readonly requests: string[] = [];
  private loaded: (() => void) | null = null;

  constructor(
    private readonly browser: PipeBrowser,
    readonly sessionId: string,
  ) {
    browser.on((method, p, sid) => {
      if (sid !== sessionId) return;
      if (method === 'Runtime.consoleAPICalled' && (p['type'] === 'error' || p['type'] === 'warning'))
        this.problems.push(`console.${String(p['type'])}: ${JSON.stringify(p['args'])}`);
      else if (method === 'Runtime.exceptionThrown')
        this.problems.push(`exception: ${JSON.stringify(p['exceptionDetails'])}`);
      else if (method === 'Log.entryAdded') {
        const e = p['entry'] as { level?: string; text?: string; url?: string };
        if (e.level === 'error' || e.level === 'warning')
          this.problems.push(`log ${e.level}: ${e.text} ${e.url ?? ''}`);
      } else if (method === 'Network.requestWillBeSent') {
        this.requests.push(String((p['request'] as { url?: string }).url));
      } else if (method === 'Page.loadEventFired') this.loaded?.();
    });
  }

  send(method: string, params: Json = {}): Promise<Json> {
    return this.browser.send(method, params, this.sessionId);
  }

  async goto(url: string): Promise<void> {
    const loaded = new Promise<void>((r) => (this.loaded = r));
    await this.send('Page.navigate', { url });
    await loaded;
  }

  /** Runs `expression` in the page; its value (JSON-able) comes back. */
  async eval<T>(expression: string): Promise<T> {
    const r = (await this.send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true })) as {
      result: { value?: unknown };
      exceptionDetails?: unknown;
    };
    if (r.exceptionDetails) throw new Error(`evaluate: ${JSON.stringify(r.exceptionDetails)}`);
    return r.result.value as T;
  }

  /** A real mouse move (hover effects run as for a user). */
  async mouseMove(x: number, y: number): Promise<void> {
    await this.send('Input.dispatchMouseEvent', { type: 'mouseMoved', x, y });
  }

  /** PNG of the whole page (or the first `maxHeight` pixels of it). */
  async screenshot(maxHeight = 4000): Promise<Buffer> {
    const { contentSize } = (await this.send('Page.getLayoutMetrics')) as {
      contentSize: { width: number; height: number };
    };
    const r = (await this.send('Page.captureScreenshot', {
      format: 'png',
      captureBeyondViewport: true,
      clip: {
        x: 0,
        y: 0,
        width: Math.ceil(contentSize.width),
        height: Math.min(maxHeight, Math.ceil(contentSize.height)),
        scale: 1,
      },
    })) as { data: string };
    return Buffer.from(r.data, 'base64');
  }
}
