// Durability of webhooks: a delivery survives the death of the process that queued it, and
// several replicas on one database send each webhook exactly once.
import { Client } from '@langchain/langgraph-sdk';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../common/db/index.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { startServer, type RunningServer } from '../support/server.js';
import {
  eventually,
  startReceiver,
  webhookConfig,
  type WebhookReceiver,
} from '../support/webhook-receiver.js';

const hi = (content: string) => ({ messages: [{ role: 'user', content }] });
const config = webhookConfig({ webhooks: { url: { disable_loopback: false } } });
const env = {
  GRAPHDOCK_WEBHOOK_RETRY_BASE_MS: '200',
  GRAPHDOCK_WEBHOOK_RETRY_MAX_SECS: '1',
  GRAPHDOCK_WEBHOOK_MAX_ATTEMPTS: '100',
  GRAPHDOCK_WEBHOOK_CONNECT_TIMEOUT_SECS: '1',
  GRAPHDOCK_WEBHOOK_TIMEOUT_SECS: '2',
};

const databases: TestDatabase[] = [];
const servers: RunningServer[] = [];
const receivers: WebhookReceiver[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop('SIGKILL')));
  await Promise.all(receivers.map((r) => r.stop()));
  await Promise.all(databases.map((d) => d.drop()));
});

async function database() {
  const db = await createTestDatabase(inject('pgAdminUrl'));
  databases.push(db);
  return db;
}

async function server(db: TestDatabase) {
  const s = await startServer({ databaseUrl: db.url, config, env });
  servers.push(s);
  return { server: s, client: new Client({ apiUrl: s.url, apiKey: null }) };
}

type Listed = {
  status: string;
  attempts: { status_code: number | null; error: string | null }[];
}[];
const listing = async (url: string, runId: string) =>
  (await (await fetch(`${url}/runs/${runId}/webhooks`)).json()) as Listed;

describe('webhook durability', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await database();
  });

  it('delivers exactly once after the queuing process is SIGKILLed while the receiver is down', async () => {
    const port = await freePort(); // nothing listens yet: connection refused
    const first = await server(db);
    const thread = await first.client.threads.create();
    await first.client.runs.wait(thread.thread_id, 'echo', {
      input: hi('survive'),
      webhook: `http://127.0.0.1:${port}/durable?token=t`,
    });
    const [run] = await first.client.runs.list(thread.thread_id);
    const runId = run?.run_id ?? '';
    const failing = await eventually(
      () => listing(first.server.url, runId),
      (d) => (d[0]?.attempts.length ?? 0) >= 1,
    );
    expect(['pending', 'delivering']).toContain(failing[0]?.status);
    expect(failing[0]?.attempts[0]?.error).toMatch(/ECONNREFUSED/);

    await first.server.stop('SIGKILL');
    const receiver = await startReceiver(port);
    receivers.push(receiver);
    const second = await server(db);

    // If the kill landed mid-attempt, the row's lease (15 s with these timeouts) must lapse first.
    const received = await receiver.waitFor(1, (w) => w.json.run_id === runId, 45_000);
    expect(received).toHaveLength(1);
    expect(received[0]?.url).toBe('/durable?token=t');
    expect(received[0]?.json).toMatchObject({ status: 'success', thread_id: thread.thread_id });
    // Time for any duplicate to show up.
    await new Promise((r) => setTimeout(r, 1500));
    expect(receiver.received.filter((w) => w.json.run_id === runId)).toHaveLength(1);
    const done = await eventually(
      () => listing(second.server.url, runId),
      (d) => d[0]?.status === 'delivered',
    );
    expect(done[0]?.status).toBe('delivered');
    const attempts = done[0]?.attempts ?? [];
    expect(attempts.at(-1)?.status_code).toBe(200);
    expect(attempts.slice(0, -1).every((a) => a.status_code === null && a.error)).toBe(true);
  });

  it('sends each webhook once with two replicas claiming from one outbox', async () => {
    const shared = await database();
    const receiver = await startReceiver();
    receivers.push(receiver);
    const a = await server(shared);
    const b = await server(shared);
    const count = 30;
    const runIds = await Promise.all(
      Array.from({ length: count }, async (_, i) => {
        const via = i % 2 ? a : b;
        const run = await via.client.runs.create(null, 'echo', {
          input: hi(`n${i}`),
          webhook: receiver.url(`/replicas/${i}`),
        });
        return run.run_id;
      }),
    );
    const received = await receiver.waitFor(count, (w) => w.url.startsWith('/replicas/'));
    expect(received).toHaveLength(count);
    await new Promise((r) => setTimeout(r, 1500));
    const all = receiver.received.filter((w) => w.url.startsWith('/replicas/'));
    expect(all).toHaveLength(count);
    expect(new Set(all.map((w) => w.json.run_id))).toEqual(new Set(runIds));
    expect(new Set(all.map((w) => w.headers['webhook-id'])).size).toBe(count);
  });
});
