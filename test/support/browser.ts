// A real headless browser for tests: Debian's Chromium (installed with apt when missing, as CI
// runs as root on a fresh machine), driven through playwright-core (which downloads nothing),
// and a page served from an origin of its own so every call to the server under test is
// cross-origin, as it is for a chat front end.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { build } from 'esbuild';
import { chromium, type Browser } from 'playwright-core';

const REPO_ROOT = join(import.meta.dirname, '..', '..');
const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

function findChromium(): string | undefined {
  const configured = process.env.GRAPHDOCK_CHROMIUM;
  if (configured) return configured;
  return CANDIDATES.find((path) => existsSync(path));
}

/** The Chromium binary; installs Debian's package first when there is none and we are root. */
export function ensureChromium(): string {
  const found = findChromium();
  if (found) return found;
  if (process.getuid?.() !== 0) {
    throw new Error(
      'No Chromium found: install Debian\'s "chromium" package or set GRAPHDOCK_CHROMIUM',
    );
  }
  // apt's own lock makes concurrent installs wait for each other instead of failing.
  const apt = (args: string[]) =>
    execFileSync('apt-get', ['-o', 'DPkg::Lock::Timeout=600', ...args], {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      timeout: 15 * 60_000,
    });
  apt(['update', '-qq']);
  apt(['install', '-y', '-q', '--no-install-recommends', 'chromium']);
  const installed = findChromium();
  if (!installed) throw new Error('apt-get installed chromium but no binary was found');
  return installed;
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: ensureChromium(),
    headless: true,
    // Root (CI) cannot use Chromium's user-namespace sandbox.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
}

/** Bundles a browser entry point (and the npm packages it imports) into one ES module. */
export async function bundleForBrowser(entry: string): Promise<string> {
  const result = await build({
    entryPoints: [join(REPO_ROOT, entry)],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'error',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  return result.outputFiles[0]!.text;
}

export interface PageOrigin {
  url: string;
  close(): Promise<void>;
}

/** Serves `/` (a page that loads `/app.js`) and `/app.js` on a free loopback port. */
export async function servePage(script: string): Promise<PageOrigin> {
  const html =
    '<!doctype html><html><head><meta charset="utf-8"><title>graphdock test page</title></head>' +
    '<body><div id="root"></div><script type="module" src="/app.js"></script></body></html>';
  const server: Server = createServer((req, res) => {
    if (req.url === '/app.js') {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' });
      res.end(script);
    } else if (req.url === '/' || req.url === '/index.html') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(html);
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    // `localhost` rather than 127.0.0.1: another host name as well as another port, so the
    // server's origin differs from the page's in every part that browsers compare.
    url: `http://localhost:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
