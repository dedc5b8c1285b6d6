// Run-completion webhooks received by a real HTTP receiver: the payload of the spec's table,
// Standard Webhooks signatures checked with the official library, configured headers with
// env templates, retries after receiver failures, and the per-run delivery listing.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { WebhookStore } from '../../runtime/webhooks/store.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useRuntime } from '../support/fixture.js';
import {
  eventually,
  startReceiver,
  webhookConfig,
  type ReceivedWebhook,
  type WebhookReceiver,
} from '../support/webhook-receiver.js';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const rt = useRuntime({
  config: webhookConfig({
    webhooks: {
      headers: {
        Authorization: 'Bearer ${{ env.LG_WEBHOOK_TOKEN }}',
        'X-Static': 'plain',
        'X-Mixed': 'a-${{env.LG_WEBHOOK_TOKEN}}-b-${{ env.LG_WEBHOOK_OTHER }}',
      },
      url: { disable_loopback: false },
    },
  }),
  env: {
    GRAPHDOCK_WEBHOOK_SECRET: SECRET,
    LG_WEBHOOK_TOKEN: 'sekrit',
    LG_WEBHOOK_OTHER: 'two',
    GRAPHDOCK_WEBHOOK_RETRY_BASE_MS: '200',
    GRAPHDOCK_WEBHOOK_MAX_ATTEMPTS: '3',
    GRAPHDOCK_SLOW_STEP_MS: '1000',
  },
});

let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.stop();
});

const hi = (content: string) => ({ messages: [{ role: 'user', content }] });
const receiverRunIds = () => receiver.received.map((w) => String(w.json.run_id));
const forRun = (runId: string) => (w: ReceivedWebhook) => w.json.run_id === runId;

async function deliveries(path: string) {
  const res = await rt.http(path);
  expect(res.status).toBe(200);
  return (await res.json()) as {
    webhook_id: string;
    status: string;
    url: string;
    attempt_count: number;
    attempts: {
      attempt: number;
      status_code: number | null;
      latency_ms: number;
      error: string | null;
    }[];
  }[];
}

describe('run-completion webhooks', () => {
  it('posts the payload of the spec, signed, with the configured headers, to the URL as given', async () => {
    const thread = await rt.client.threads.create();
    const url = receiver.url('/hook?token=a%2Fb+c&x=1');
    await rt.client.runs.wait(thread.thread_id, 'echo', {
      input: hi('ping'),
      metadata: { team: 'blue' },
      webhook: url,
    });
    const runs = await rt.client.runs.list(thread.thread_id);
    const runId = runs[0]?.run_id ?? '';
    const [hook] = await receiver.waitFor(1, forRun(runId));
    expect(hook).toBeDefined();
    if (!hook) return;

    // The path and the ?token= query arrive untouched.
    expect(hook.url).toBe('/hook?token=a%2Fb+c&x=1');
    const p = hook.json;
    expect(Object.keys(p).sort()).toEqual(
      [
        'assistant_id',
        'created_at',
        'kwargs',
        'metadata',
        'multitask_strategy',
        'run_ended_at',
        'run_id',
        'run_started_at',
        'status',
        'thread_id',
        'updated_at',
        'values',
        'webhook_sent_at',
      ].sort(),
    );
    expect(p).toMatchObject({
      run_id: runId,
      thread_id: thread.thread_id,
      status: 'success',
      multitask_strategy: 'enqueue',
      metadata: { team: 'blue' },
      kwargs: { input: hi('ping'), webhook: url },
    });
    const assistants = await rt.client.assistants.search({ graphId: 'echo' });
    expect(p.assistant_id).toBe(assistants[0]?.assistant_id);
    const values = p.values as { messages: { content: string }[] };
    expect(values.messages.map((m) => m.content)).toEqual(['ping', 'echo: ping']);
    for (const key of [
      'created_at',
      'updated_at',
      'run_started_at',
      'run_ended_at',
      'webhook_sent_at',
    ])
      expect(Number.isNaN(Date.parse(p[key] as string)), key).toBe(false);
    expect(Date.parse(p.run_ended_at as string)).toBeLessThanOrEqual(
      Date.parse(p.webhook_sent_at as string),
    );

    // Standard Webhooks: the official library accepts the signature over the raw body.
    const verified = new Webhook(SECRET).verify(hook.body, {
      'webhook-id': String(hook.headers['webhook-id']),
      'webhook-timestamp': String(hook.headers['webhook-timestamp']),
      'webhook-signature': String(hook.headers['webhook-signature']),
    });
    expect(verified).toEqual(p);
    // ...and rejects a tampered body.
    expect(() =>
      new Webhook(SECRET).verify(hook.body.replace('ping', 'pong'), {
        'webhook-id': String(hook.headers['webhook-id']),
        'webhook-timestamp': String(hook.headers['webhook-timestamp']),
        'webhook-signature': String(hook.headers['webhook-signature']),
      }),
    ).toThrow();

    expect(hook.headers.authorization).toBe('Bearer sekrit');
    expect(hook.headers['x-static']).toBe('plain');
    expect(hook.headers['x-mixed']).toBe('a-sekrit-b-two');
    expect(hook.headers['content-type']).toBe('application/json');

    const listed = await deliveries(`/threads/${thread.thread_id}/runs/${runId}/webhooks`);
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({
      webhook_id: hook.headers['webhook-id'],
      status: 'delivered',
      attempt_count: 1,
      url: `${receiver.url('/hook')}?token=***&x=***`,
    });
    expect(listed[0]?.attempts[0]).toMatchObject({ attempt: 1, status_code: 200, error: null });
    expect(await deliveries(`/runs/${runId}/webhooks`)).toEqual(listed);
  });

  it('leaves values out for a stateless run', async () => {
    const before = receiver.received.length;
    await rt.client.runs.wait(null, 'echo', { input: hi('alone'), webhook: receiver.url() });
    const [hook] = await receiver.waitFor(before + 1);
    const latest = receiver.received.at(-1);
    expect(hook).toBeDefined();
    expect(latest?.json).toMatchObject({ status: 'success', kwargs: { input: hi('alone') } });
    expect(latest?.json).not.toHaveProperty('values');
    expect(latest?.json).not.toHaveProperty('error');
  });

  it('reports a failed run with error {error, message}', async () => {
    const thread = await rt.client.threads.create();
    const run = await rt.client.runs.create(thread.thread_id, 'echo', {
      input: hi('fail'),
      // One superstep allowed, two needed: the graph fails with a recursion error.
      config: { recursion_limit: 1 },
      webhook: receiver.url('/failed'),
    });
    const [hook] = await receiver.waitFor(1, forRun(run.run_id));
    expect(hook?.json.status).toBe('error');
    const error = hook?.json.error as { error: string; message: string };
    expect(typeof error.error).toBe('string');
    expect(error.error).toMatch(/Recursion/);
    expect(error.message.length).toBeGreaterThan(0);
    expect(hook?.json).toHaveProperty('values');
  });

  it('reports a cancelled run as interrupted', async () => {
    const thread = await rt.client.threads.create();
    const run = await rt.client.runs.create(thread.thread_id, 'slow', {
      input: hi('stop me'),
      webhook: receiver.url('/cancelled'),
    });
    await eventually(
      () => rt.client.runs.get(thread.thread_id, run.run_id),
      (r) => r.status === 'running',
    );
    await rt.client.runs.cancel(thread.thread_id, run.run_id, false, 'interrupt');
    const [hook] = await receiver.waitFor(1, forRun(run.run_id));
    expect(hook?.json.status).toBe('interrupted');
    expect(hook?.json).not.toHaveProperty('error');
  });

  it('retries after a 500 and delivers on the next attempt with the same webhook-id', async () => {
    receiver.respond({ status: 500 });
    const run = await rt.client.runs.create(null, 'echo', {
      input: hi('retry'),
      webhook: receiver.url('/retry'),
    });
    const hooks = await receiver.waitFor(2, forRun(run.run_id));
    expect(hooks).toHaveLength(2);
    expect(hooks[0]?.headers['webhook-id']).toBe(hooks[1]?.headers['webhook-id']);
    const listed = await eventually(
      () => deliveries(`/runs/${run.run_id}/webhooks`),
      (d) => d[0]?.status === 'delivered',
    );
    expect(listed[0]?.attempts.map((a) => a.status_code)).toEqual([500, 200]);
    expect(listed[0]?.attempts[0]?.error).toBe('HTTP 500: receiver says no');
    for (const a of listed[0]?.attempts ?? []) expect(a.latency_ms).toBeGreaterThan(0);
  });

  it('waits at least as long as a 429 Retry-After asks', async () => {
    receiver.respond({ status: 429, headers: { 'retry-after': '2' } });
    const run = await rt.client.runs.create(null, 'echo', {
      input: hi('throttled'),
      webhook: receiver.url('/throttled'),
    });
    const hooks = await receiver.waitFor(2, forRun(run.run_id));
    expect(hooks).toHaveLength(2);
    const gap = (hooks[1]?.receivedAt ?? 0) - (hooks[0]?.receivedAt ?? 0);
    expect(gap).toBeGreaterThanOrEqual(1900);
  });

  it('gives up after the configured attempts, recording each one, and does not retry a 4xx', async () => {
    receiver.respond({ status: 503 }, { status: 502 }, { status: 500 });
    const run = await rt.client.runs.create(null, 'echo', {
      input: hi('down'),
      webhook: receiver.url('/down'),
    });
    const listed = await eventually(
      () => deliveries(`/runs/${run.run_id}/webhooks`),
      (d) => d[0]?.status === 'failed',
    );
    expect(listed[0]?.attempts.map((a) => a.status_code)).toEqual([503, 502, 500]);
    expect((await receiver.waitFor(3, forRun(run.run_id))).length).toBe(3);

    receiver.respond({ status: 404 });
    const gone = await rt.client.runs.create(null, 'echo', {
      input: hi('gone'),
      webhook: receiver.url('/gone'),
    });
    const failed = await eventually(
      () => deliveries(`/runs/${gone.run_id}/webhooks`),
      (d) => d[0]?.status === 'failed',
    );
    expect(failed[0]?.attempts.map((a) => a.status_code)).toEqual([404]);
  });

  it('counts attempts by outcome in /metrics', async () => {
    const text = await (await rt.http('/metrics')).text();
    const value = (line: string) =>
      Number(
        text
          .split('\n')
          .find((l) => l.startsWith(line))
          ?.split(' ')
          .at(-1) ?? NaN,
      );
    // The tests above: deliveries that succeeded, 500/429/503/502 retries, and give-ups.
    expect(value('graphdock_webhook_attempts_total{outcome="delivered"}')).toBeGreaterThanOrEqual(
      6,
    );
    expect(value('graphdock_webhook_attempts_total{outcome="retry"}')).toBeGreaterThanOrEqual(4);
    expect(value('graphdock_webhook_attempts_total{outcome="failed"}')).toBeGreaterThanOrEqual(2);
    expect(value('graphdock_webhook_delivered_after_run_end_seconds_count')).toBeGreaterThanOrEqual(
      6,
    );
  });

  it('lists nothing for a run without a webhook and 404s for an unknown run', async () => {
    const thread = await rt.client.threads.create();
    await rt.client.runs.wait(thread.thread_id, 'echo', { input: hi('quiet') });
    const [run] = await rt.client.runs.list(thread.thread_id);
    expect(await deliveries(`/threads/${thread.thread_id}/runs/${run?.run_id}/webhooks`)).toEqual(
      [],
    );
    const missing = await rt.http(`/runs/${crypto.randomUUID()}/webhooks`);
    expect(missing.status).toBe(404);
  });

  it('refuses bad URLs with 422 naming the rule, on every endpoint that takes a webhook', async () => {
    const thread = await rt.client.threads.create();
    const cases: [string, string][] = [
      ['ftp://example.com/x', 'http or https'],
      ['not a url', 'not a valid absolute URL'],
      ['/relative/hook', 'Relative webhook URLs'],
      ['http://169.254.169.254/latest/meta-data', 'metadata'],
      ['http://[::ffff:169.254.169.254]/x', 'metadata'],
      ['http://metadata.google.internal/x', 'metadata'],
      ['http://10.0.0.8/x', 'disable_private_ips'],
    ];
    const paths = [
      `/threads/${thread.thread_id}/runs`,
      `/threads/${thread.thread_id}/runs/wait`,
      `/threads/${thread.thread_id}/runs/stream`,
      '/runs',
      '/runs/wait',
      '/runs/stream',
    ];
    for (const [webhook, reason] of cases) {
      for (const path of paths) {
        const res = await rt.http(path, {
          method: 'POST',
          json: { assistant_id: 'echo', input: hi('x'), webhook },
        });
        expect(res.status, `${path} ${webhook}`).toBe(422);
        const body = (await res.json()) as { detail: { loc: string[]; msg: string }[] };
        expect(body.detail[0]?.loc).toEqual(['body', 'webhook']);
        expect(body.detail[0]?.msg).toContain(reason);
      }
    }
    expect((await rt.client.runs.list(thread.thread_id)).length).toBe(0);
  });

  it('deletes finished deliveries after the retention period, and only those', async () => {
    const thread = await rt.client.threads.create();
    await rt.client.runs.wait(thread.thread_id, 'echo', {
      input: hi('old'),
      webhook: receiver.url('/old'),
    });
    const [run] = await rt.client.runs.list(thread.thread_id);
    const path = `/runs/${run?.run_id}/webhooks`;
    await eventually(
      () => deliveries(path),
      (d) => d[0]?.status === 'delivered',
    );
    const pool = new pg.Pool({ connectionString: rt.db.url, max: 1 });
    try {
      await pool.query(
        `UPDATE webhook_deliveries SET updated_at = now() - interval '31 days' WHERE run_id = $1`,
        [run?.run_id],
      );
      const { rows } = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhook_deliveries WHERE updated_at < now() - interval '30 days'`,
      );
      expect(await new WebhookStore(pool).purgeFinished(30)).toBe(rows[0]?.n);
      expect(await deliveries(path)).toEqual([]);
      expect((await deliveries(`/runs/${receiverRunIds()[0]}/webhooks`)).length).toBe(1);
    } finally {
      await pool.end();
    }
  });
});
