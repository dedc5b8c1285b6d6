// A real HTTP webhook receiver for tests: records every request (raw body, headers, arrival
// time) and answers with scripted responses, 200 once the script runs out.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './server.js';

export interface ReceivedWebhook {
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  json: Record<string, unknown>;
  receivedAt: number;
}

export interface ScriptedResponse {
  status: number;
  headers?: Record<string, string>;
}

export interface WebhookReceiver {
  port: number;
  received: ReceivedWebhook[];
  /** Responses for the next requests, in order. */
  respond(...responses: ScriptedResponse[]): void;
  url(path?: string): string;
  /** Waits until `count` requests matched `filter`; returns them. */
  waitFor(
    count: number,
    filter?: (w: ReceivedWebhook) => boolean,
    ms?: number,
  ): Promise<ReceivedWebhook[]>;
  stop(): Promise<void>;
}

export async function startReceiver(port?: number): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const script: ScriptedResponse[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: Record<string, unknown> = {};
      try {
        json = JSON.parse(body) as Record<string, unknown>;
      } catch {
        // kept as raw text only
      }
      received.push({
        url: req.url ?? '',
        headers: req.headers,
        body,
        json,
        receivedAt: Date.now(),
      });
      const next = script.shift() ?? { status: 200 };
      res.writeHead(next.status, next.headers ?? {});
      res.end(next.status >= 400 ? 'receiver says no' : 'ok');
    });
  });
  // Port 0 lets the kernel pick and bind in one step, so nothing can take it in between.
  await new Promise<void>((resolve) => server.listen(port ?? 0, '127.0.0.1', resolve));
  const listenPort = (server.address() as AddressInfo).port;
  return {
    port: listenPort,
    received,
    respond: (...responses) => script.push(...responses),
    url: (path = '/hook') => `http://127.0.0.1:${listenPort}${path}`,
    waitFor: async (count, filter = () => true, ms = 20_000) => {
      const deadline = Date.now() + ms;
      for (;;) {
        const matching = received.filter(filter);
        if (matching.length >= count || Date.now() > deadline) return matching;
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A langgraph.json serving the example graphs, with a `webhooks` (and `http`) section. */
export function webhookConfig(extra: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'graphdock-webhooks-'));
  const graphs = join(REPO_ROOT, 'examples', 'graphs');
  const file = join(dir, 'langgraph.json');
  writeFileSync(
    file,
    JSON.stringify({
      graphs: {
        echo: join(graphs, 'echo.ts:graph'),
        slow: join(graphs, 'slow.ts:graph'),
        interrupt: join(graphs, 'interrupt.ts:graph'),
      },
      ...extra,
    }),
  );
  return file;
}

export async function eventually<T>(
  fn: () => Promise<T>,
  ok: (v: T) => boolean,
  ms = 20_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await fn();
    if (ok(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
}
