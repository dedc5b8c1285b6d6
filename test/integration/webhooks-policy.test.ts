// The `webhooks.url` rules and the SSRF guard through HTTP (422 at run creation, refusal at
// send), `http.disable_webhooks`, and start-up failures for bad webhook configuration.
import { Client } from '@langchain/langgraph-sdk';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { runCli, startServer, type RunningServer } from '../support/server.js';
import {
  eventually,
  startReceiver,
  webhookConfig,
  type WebhookReceiver,
} from '../support/webhook-receiver.js';

const hi = (content: string) => ({ messages: [{ role: 'user', content }] });

let db: TestDatabase;
let receiver: WebhookReceiver;
const servers: RunningServer[] = [];
beforeAll(async () => {
  db = await createTestDatabase(inject('pgAdminUrl'));
  receiver = await startReceiver();
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await receiver.stop();
  await db.drop();
});

async function serve(
  config: Record<string, unknown>,
  env: Record<string, string> = {},
  database: TestDatabase = db,
) {
  const server = await startServer({
    databaseUrl: database.url,
    config: webhookConfig(config),
    env,
  });
  servers.push(server);
  return server;
}

async function create(server: RunningServer, webhook: string, extra: Record<string, unknown> = {}) {
  const res = await fetch(`${server.url}/runs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ assistant_id: 'echo', input: hi('x'), webhook, ...extra }),
  });
  const body = (await res.json()) as { detail?: { msg: string; type: string }[]; run_id?: string };
  return {
    status: res.status,
    msg: body.detail?.[0]?.msg ?? '',
    type: body.detail?.[0]?.type ?? '',
    body,
  };
}

describe('default policy: loopback, private and special addresses refused', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await serve({});
  });

  it.each([
    // A host name whose DNS answer is loopback (from /etc/hosts): every answer is checked.
    ['http://localhost:9/x', 'disable_loopback', 'localhost resolves to 127.0.0.1'],
    ['http://127.0.0.1:9/x', 'disable_loopback', 'loopback'],
    ['http://127.8.9.10/x', 'disable_loopback', 'loopback'],
    ['http://[::1]:9/x', 'disable_loopback', 'loopback'],
    ['http://[::ffff:127.0.0.1]/x', 'disable_loopback', '::ffff:0:0/96 embedding 127.0.0.1'],
    ['http://[64:ff9b::7f00:1]/x', 'disable_loopback', '64:ff9b::/96 embedding 127.0.0.1'],
    ['http://app.localhost/x', 'disable_loopback', 'loopback name'],
    ['/relative/hook', 'disable_loopback', 'Relative webhook URLs'],
    ['http://169.254.169.254/latest/meta-data/', 'ssrf', 'metadata'],
    ['http://[fd00:ec2::254]/', 'ssrf', 'metadata'],
    ['http://100.100.100.200/', 'ssrf', 'metadata'],
    ['http://metadata.google.internal/', 'ssrf', 'metadata'],
    ['http://169.254.1.1/', 'ssrf', 'link-local'],
    ['http://[fe80::1]/', 'ssrf', 'link-local'],
    ['http://224.0.0.1/', 'ssrf', 'multicast'],
    ['http://0.0.0.0/', 'ssrf', 'reserved'],
    ['http://10.1.2.3/', 'disable_private_ips', 'private'],
    ['http://172.16.0.1/', 'disable_private_ips', 'private'],
    ['http://192.168.1.1/', 'disable_private_ips', 'private'],
    ['http://100.64.0.1/', 'disable_private_ips', '100.64.0.0/10'],
    ['http://[fd12:3456::1]/', 'disable_private_ips', 'fc00::/7'],
  ])('refuses %s (%s)', async (url, rule, reason) => {
    const res = await create(server, url);
    expect(res.status).toBe(422);
    expect(res.type).toBe(`webhook_url.${rule}`);
    expect(res.msg).toContain(reason);
  });

  it('accepts a public host name (resolution failures are left to the send-time check)', async () => {
    const res = await create(server, 'https://hooks.example.com/x?token=t');
    expect(res.status).toBe(200);
    expect(res.body.run_id).toBeDefined();
  });
});

describe('webhooks.url rules', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await serve({
      webhooks: {
        url: {
          allowed_domains: ['hooks.example.com', '*.corp.example'],
          require_https: true,
          allowed_ports: [443, 8443],
          max_url_length: 60,
        },
      },
    });
  });

  it.each([
    'https://hooks.example.com/x',
    'https://HOOKS.example.com./x',
    'https://a.corp.example/x',
    'https://a.b.corp.example:8443/x',
  ])('accepts %s', async (url) => {
    expect((await create(server, url)).status).toBe(200);
  });

  it.each([
    ['https://corp.example/x', 'allowed_domains'],
    ['https://evil.example/x', 'allowed_domains'],
    ['https://hooks.example.com.evil.example/x', 'allowed_domains'],
    ['https://xcorp.example/x', 'allowed_domains'],
    ['http://hooks.example.com/x', 'require_https'],
    ['https://hooks.example.com:444/x', 'allowed_ports'],
    [`https://hooks.example.com/${'x'.repeat(40)}`, 'max_url_length'],
    ['ftp://hooks.example.com/x', 'scheme'],
  ])('refuses %s by %s', async (url, rule) => {
    const res = await create(server, url);
    expect(res.status).toBe(422);
    expect(res.type).toBe(`webhook_url.${rule}`);
    expect(res.msg).toContain(rule === 'scheme' ? 'http or https' : '');
  });

  it('applies the default port of the scheme when the URL has none', async () => {
    const open = await serve({ webhooks: { url: { allowed_ports: [80] } } });
    expect((await create(open, 'http://hooks.example.com/x')).status).toBe(200);
    const https = await create(open, 'https://hooks.example.com/x');
    expect(https.status).toBe(422);
    expect(https.msg).toContain('port 443');
  });
});

describe('send time', () => {
  // Own databases: a replica of another configuration must not run (and queue) these runs.
  const isolated: TestDatabase[] = [];
  const ownDatabase = async () => {
    const created = await createTestDatabase(inject('pgAdminUrl'));
    isolated.push(created);
    return created;
  };
  afterAll(async () => {
    for (const server of servers.splice(0)) await server.stop();
    await Promise.all(isolated.map((d) => d.drop()));
  });

  it('re-checks the URL against the configuration of the process that sends', async () => {
    // Accepted by a process that allows loopback; queued; that process stops before the run is due.
    const database = await ownDatabase();
    const lenient = await serve({ webhooks: { url: { disable_loopback: false } } }, {}, database);
    const res = await create(lenient, receiver.url('/later'), { after_seconds: 4 });
    expect(res.status).toBe(200);
    await lenient.stop();
    // A redeploy with the default (loopback refused) runs it and refuses to send.
    const strict = await serve({}, {}, database);
    const runId = res.body.run_id ?? '';
    const listed = await eventually(
      async () =>
        (await (await fetch(`${strict.url}/runs/${runId}/webhooks`)).json()) as {
          status: string;
          last_error: string;
          attempts: unknown[];
        }[],
      (d) => d[0]?.status === 'failed',
    );
    expect(listed[0]?.last_error).toContain('refused at send (disable_loopback)');
    expect(receiver.received.filter((w) => w.url === '/later')).toEqual([]);
  });

  it('http.disable_webhooks: runs execute, nothing is queued or sent', async () => {
    const server = await serve(
      { http: { disable_webhooks: true }, webhooks: { url: { disable_loopback: false } } },
      {},
      await ownDatabase(),
    );
    const client = new Client({ apiUrl: server.url, apiKey: null });
    const thread = await client.threads.create();
    const result = await client.runs.wait(thread.thread_id, 'echo', {
      input: hi('silent'),
      webhook: receiver.url('/disabled'),
    });
    expect(result).toMatchObject({
      messages: [{ content: 'silent' }, { content: 'echo: silent' }],
    });
    const [run] = await client.runs.list(thread.thread_id);
    expect(run?.status).toBe('success');
    await new Promise((r) => setTimeout(r, 1500));
    expect(receiver.received.filter((w) => w.url === '/disabled')).toEqual([]);
    const listed = await fetch(`${server.url}/runs/${run?.run_id}/webhooks`);
    expect(await listed.json()).toEqual([]);
  });
});

describe('start-up', () => {
  const start = (config: Record<string, unknown>, env: Record<string, string> = {}) =>
    runCli(['runtime', '--config', webhookConfig(config), '--port', '0'], {
      DATABASE_URL: db.url,
      ...env,
    });

  it('stops when a header template names a missing variable, naming it', async () => {
    const { code, output } = await start({
      webhooks: { headers: { 'X-Key': '${{ env.LG_WEBHOOK_NOT_SET }}' } },
    });
    expect(code).toBe(1);
    expect(output).toContain(
      'webhooks.headers.X-Key: environment variable LG_WEBHOOK_NOT_SET is not set',
    );
  });

  it('stops when a template names a variable outside the prefix', async () => {
    const { code, output } = await start(
      { webhooks: { headers: { 'X-Key': '${{ env.DATABASE_URL }}' } } },
      {},
    );
    expect(code).toBe(1);
    expect(output).toContain('environment variable DATABASE_URL may not be used');
    expect(output).toContain('"LG_WEBHOOK_"');
  });

  it('honours a custom env_prefix', async () => {
    const { code, output } = await start(
      { webhooks: { env_prefix: 'HOOK_', headers: { 'X-Key': '${{ env.LG_WEBHOOK_X }}' } } },
      { LG_WEBHOOK_X: 'set' },
    );
    expect(code).toBe(1);
    expect(output).toContain('only names starting with "HOOK_"');
  });

  it('stops on a signing secret that is not whsec_ base64', async () => {
    const { code, output } = await start({}, { GRAPHDOCK_WEBHOOK_SECRET: 'whsec_not*base64' });
    expect(code).toBe(1);
    expect(output).toContain('GRAPHDOCK_WEBHOOK_SECRET');
  });
});
