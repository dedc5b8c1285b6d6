// Many open SSE streams on one Graphdock process: `count` clients each follow a thread with
// GET /threads/{id}/stream (as chat UIs keep a stream open while idle). Records the server's
// resident memory before, with every stream open, and after they closed, and checks that the
// streams still deliver: a run on some of the threads must reach its stream.
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool, type Dispatcher } from 'undici';
import { HttpClient } from '../http/load.js';
import type { RunningServer } from '../http/servers.js';

export interface StreamsResult {
  opened: number;
  rssBeforeMiB: number;
  rssOpenMiB: number;
  rssAfterMiB: number;
  probes: number;
  delivered: number;
}

const PROBES = 50;

export async function openStreams(
  server: RunningServer,
  count: number,
  rssMiB: () => number,
): Promise<StreamsResult> {
  const api = new HttpClient(server.url, 16);
  const threads: string[] = [];
  const pool = new Pool(server.url, { connections: count, bodyTimeout: 0, headersTimeout: 30_000 });
  const bodies: Dispatcher.ResponseData['body'][] = [];
  try {
    for (let i = 0; i < count; i += 16) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(16, count - i) }, () =>
          api.json<{ thread_id: string }>('POST', '/threads', {}),
        ),
      );
      threads.push(...batch.map((t) => t.thread_id));
    }
    await sleep(2000);
    const rssBeforeMiB = rssMiB();
    const received = new Map<string, string>();
    let opened = 0;
    for (let i = 0; i < count; i += 100) {
      await Promise.all(
        threads.slice(i, i + 100).map(async (id) => {
          const res = await pool.request({ method: 'GET', path: `/threads/${id}/stream` });
          const type = String(res.headers['content-type'] ?? '');
          if (res.statusCode !== 200 || !type.includes('text/event-stream')) {
            await res.body.text();
            return;
          }
          opened++;
          bodies.push(res.body);
          received.set(id, '');
          res.body.setEncoding('utf8');
          res.body.on('data', (chunk: string) => {
            received.set(id, (received.get(id) ?? '').slice(-4000) + chunk);
          });
          res.body.on('error', () => undefined);
        }),
      );
    }
    await sleep(5000);
    const rssOpenMiB = rssMiB();
    const probed = threads.slice(0, PROBES);
    for (const id of probed) {
      await api.json('POST', `/threads/${id}/runs`, {
        assistant_id: 'echo',
        input: { messages: [{ role: 'user', content: 'ping' }] },
      });
    }
    const deadline = Date.now() + 30_000;
    const delivered = () => probed.filter((id) => received.get(id)?.includes('echo: ping')).length;
    while (delivered() < probed.length && Date.now() < deadline) await sleep(200);
    const result = {
      opened,
      rssBeforeMiB,
      rssOpenMiB,
      probes: probed.length,
      delivered: delivered(),
    };
    for (const body of bodies.splice(0)) body.destroy();
    await sleep(3000);
    return { ...result, rssAfterMiB: rssMiB() };
  } finally {
    for (const body of bodies) body.destroy();
    await pool.destroy();
    await api.close();
  }
}
