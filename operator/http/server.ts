// /healthz, /readyz and /metrics on one small HTTP server (no framework needed for three routes).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from '../../common/metrics/index.js';

export interface ProbeChecks {
  /** Null when healthy, else the reason. */
  health(): string | null;
  ready(): string | null;
}

export interface ProbeServer {
  url: string;
  close(): Promise<void>;
}

export async function startProbeServer(
  registry: Registry,
  checks: ProbeChecks,
  port: number,
  host: string,
): Promise<ProbeServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const reply = (status: number, body: string, type = 'text/plain; charset=utf-8') => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    };
    if (req.method !== 'GET') return reply(405, 'method not allowed\n');
    switch (path) {
      case '/healthz':
      case '/ok': {
        const problem = checks.health();
        return problem ? reply(500, `${problem}\n`) : reply(200, 'ok\n');
      }
      case '/readyz': {
        const problem = checks.ready();
        return problem ? reply(503, `${problem}\n`) : reply(200, 'ok\n');
      }
      case '/metrics':
        registry
          .metrics()
          .then((text) => reply(200, text, registry.contentType))
          .catch((err: unknown) => reply(500, `${String(err)}\n`));
        return;
      default:
        return reply(404, 'not found\n');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
