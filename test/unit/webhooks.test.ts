// The pure parts of the webhooks context: address classes, URL rules, the SSRF guard with an
// injected resolver, header templates, signatures (checked by the official library), backoff.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { classifyAddress } from '../../runtime/webhooks/addresses.js';
import { BlockedDestinationError, SsrfGuard, type Resolver } from '../../runtime/webhooks/guard.js';
import { resolveWebhookHeaders } from '../../runtime/webhooks/headers.js';
import { maskedUrl } from '../../runtime/webhooks/deliveries.js';
import { webhookPayload, type RunSnapshot } from '../../runtime/webhooks/payload.js';
import { parseRetryAfter, sendWebhook } from '../../runtime/webhooks/sender.js';
import { retryDelayMs } from '../../runtime/webhooks/settings.js';
import { guardedAgent } from '../../runtime/webhooks/transport.js';
import { WebhookSigner } from '../../runtime/webhooks/signing.js';
import { checkWebhookUrl, urlPolicyFrom } from '../../runtime/webhooks/url-policy.js';

describe('address classes', () => {
  it.each([
    ['8.8.8.8', 'public'],
    ['2606:4700::1111', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.0.1', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.255', 'private'],
    ['100.128.0.1', 'public'],
    ['fc00::1', 'private'],
    ['fd12::1', 'private'],
    ['169.254.169.254', 'metadata'],
    ['169.254.170.2', 'metadata'],
    ['100.100.100.200', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['fe80::a9fe:a9fe', 'metadata'],
    ['169.254.0.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['224.0.0.251', 'multicast'],
    ['ff02::1', 'multicast'],
    ['0.0.0.0', 'reserved'],
    ['::', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['192.0.2.1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['2001:0:4136:e378::1', 'reserved'], // Teredo
    ['64:ff9b:1::1', 'reserved'],
    // Wrappers are judged by the IPv4 address inside.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['::ffff:8.8.8.8', 'public'],
    ['64:ff9b::a00:1', 'private'],
    ['64:ff9b::169.254.169.254', 'metadata'],
    ['64:ff9b::808:808', 'public'],
    ['::127.0.0.1', 'loopback'],
    ['2002:7f00:1::', 'loopback'], // 6to4 of 127.0.0.1
    ['2002:a9fe:a9fe::1', 'metadata'],
    ['[::1]', 'loopback'],
  ])('%s is %s', (address, cls) => {
    expect(classifyAddress(address).class).toBe(cls);
  });

  it('rejects non-addresses', () => {
    expect(() => classifyAddress('example.com')).toThrow(/not an IP address/);
  });
});

describe('URL rules', () => {
  const open = urlPolicyFrom({ disable_loopback: false, disable_private_ips: false });
  const strict = urlPolicyFrom({
    allowed_domains: ['Hooks.Example.com', '*.corp.example'],
    require_https: true,
    allowed_ports: [443],
    max_url_length: 50,
  });
  const rule = (url: string, policy = strict) => {
    const checked = checkWebhookUrl(url, policy);
    return checked.ok ? 'ok' : checked.rule;
  };

  it('defaults: loopback and private refused, length 4096, any port and host', () => {
    const d = urlPolicyFrom();
    expect(d).toMatchObject({
      allowLoopback: false,
      allowPrivate: false,
      maxUrlLength: 4096,
      requireHttps: false,
      allowedPorts: undefined,
      allowedDomains: undefined,
    });
    expect(rule('http://example.com:8080/x', d)).toBe('ok');
    expect(rule('http://127.0.0.1/x', d)).toBe('disable_loopback');
    expect(rule('http://10.0.0.1/x', d)).toBe('disable_private_ips');
    expect(rule(`https://example.com/${'a'.repeat(4096)}`, d)).toBe('max_url_length');
  });

  it.each([
    ['https://hooks.example.com/x', 'ok'],
    ['https://hooks.example.com:443/x', 'ok'],
    ['https://HOOKS.EXAMPLE.COM./x', 'ok'],
    ['https://a.corp.example/x', 'ok'],
    ['https://deep.a.corp.example/x', 'ok'],
    ['https://corp.example/x', 'allowed_domains'],
    ['https://acorp.example/x', 'allowed_domains'],
    ['https://hooks.example.com.attacker.io/x', 'allowed_domains'],
    ['https://sub.hooks.example.com/x', 'allowed_domains'],
    ['http://hooks.example.com/x', 'require_https'],
    ['https://hooks.example.com:8443/x', 'allowed_ports'],
    ['https://hooks.example.com/' + 'x'.repeat(30), 'max_url_length'],
    ['ftp://hooks.example.com/x', 'scheme'],
    ['javascript:alert(1)', 'scheme'],
    ['hooks.example.com/x', 'url'],
    ['/relative', 'disable_loopback'],
  ])('strict: %s -> %s', (url, expected) => {
    expect(rule(url)).toBe(expected);
  });

  it('default ports by scheme count against allowed_ports', () => {
    const p = urlPolicyFrom({ allowed_ports: [80] });
    expect(rule('http://example.com/x', p)).toBe('ok');
    expect(rule('https://example.com/x', p)).toBe('allowed_ports');
    expect(rule('http://example.com:80/x', p)).toBe('ok');
  });

  it('relative URLs are refused even with loopback allowed (no in-process dispatch)', () => {
    const checked = checkWebhookUrl('/runs/hook', open);
    expect(checked.ok).toBe(false);
    if (!checked.ok) expect(checked.rule).toBe('url');
  });

  it('metadata names and *.localhost are refused by name', () => {
    expect(rule('http://metadata.google.internal/x', open)).toBe('ssrf');
    expect(rule('http://instance-data/x', open)).toBe('ssrf');
    expect(rule('http://app.localhost/x', urlPolicyFrom())).toBe('disable_loopback');
    expect(rule('http://app.localhost/x', open)).toBe('ok');
  });

  it('IP literals: wrappers, metadata and link-local refused even when everything else is allowed', () => {
    expect(rule('http://[::ffff:169.254.169.254]/', open)).toBe('ssrf');
    expect(rule('http://169.254.10.10/', open)).toBe('ssrf');
    expect(rule('http://[64:ff9b::7f00:1]/', urlPolicyFrom())).toBe('disable_loopback');
    expect(rule('http://127.0.0.1:1234/', open)).toBe('ok');
    expect(rule('http://192.168.1.1/', open)).toBe('ok');
    // Decimal and hex host forms are normalised by the URL parser before the check.
    expect(rule('http://2130706433/', urlPolicyFrom())).toBe('disable_loopback');
    expect(rule('http://0x7f.1/', urlPolicyFrom())).toBe('disable_loopback');
  });
});

describe('SSRF guard with an injected resolver', () => {
  const dns: Record<string, { address: string; family: number }[]> = {
    'rebind.test': [{ address: '127.0.0.1', family: 4 }],
    'mixed.test': [
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.5', family: 4 },
    ],
    'metadata.test': [{ address: '169.254.169.254', family: 4 }],
    'mapped.test': [{ address: '::ffff:127.0.0.1', family: 6 }],
    'public.test': [
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1::1', family: 6 },
    ],
  };
  const resolver: Resolver = (host) => {
    const answers = dns[host];
    return answers ? Promise.resolve(answers) : Promise.reject(new Error(`ENOTFOUND ${host}`));
  };
  const guard = new SsrfGuard({ allowLoopback: false, allowPrivate: false }, resolver);

  it.each([
    ['rebind.test', 'disable_loopback', 'rebind.test resolves to 127.0.0.1'],
    ['mixed.test', 'disable_private_ips', 'resolves to 10.0.0.5'],
    ['metadata.test', 'ssrf', 'metadata'],
    ['mapped.test', 'disable_loopback', 'embedding 127.0.0.1'],
    ['127.0.0.1', 'disable_loopback', 'loopback'],
  ])('refuses %s', async (host, rule, reason) => {
    const err = await guard.addresses(host).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BlockedDestinationError);
    expect((err as BlockedDestinationError).rule).toBe(rule);
    expect((err as Error).message).toContain(reason);
  });

  it('passes a host whose every answer is public', async () => {
    expect(await guard.addresses('public.test')).toHaveLength(2);
  });

  it('the socket lookup answers only with checked addresses, honouring the family', async () => {
    const lookup = guard.lookup();
    const one = await new Promise<[unknown, unknown, unknown]>((resolve) =>
      lookup('public.test', { family: 6 }, (err, address, family) =>
        resolve([err, address, family]),
      ),
    );
    expect(one).toEqual([null, '2606:2800:220:1::1', 6]);
    const refused = await new Promise<unknown>((resolve) =>
      lookup('rebind.test', {}, (err) => resolve(err)),
    );
    expect(refused).toBeInstanceOf(BlockedDestinationError);
  });

  it('the dispatcher never connects to a refused address (rebinding name or literal)', async () => {
    let hits = 0;
    const server = createServer((_req, res) => {
      hits += 1;
      res.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const agent = guardedAgent(guard, { connectTimeoutMs: 1000, responseTimeoutMs: 1000 });
    try {
      for (const host of ['rebind.test', '127.0.0.1', '[::ffff:127.0.0.1]']) {
        const result = await sendWebhook(agent, new URL(`http://${host}:${port}/x`), {}, '{}');
        expect(result.outcome, host).toBe('give-up');
        expect(result.error, host).toContain('Webhook host blocked');
      }
      expect(hits).toBe(0);
      // The same agent with loopback allowed reaches the server: the refusal above was the guard.
      const lenient = new SsrfGuard({ allowLoopback: true, allowPrivate: false }, resolver);
      const allowed = guardedAgent(lenient, { connectTimeoutMs: 1000, responseTimeoutMs: 1000 });
      const ok = await sendWebhook(allowed, new URL(`http://rebind.test:${port}/x`), {}, '{}');
      expect(ok).toMatchObject({ outcome: 'delivered', statusCode: 200 });
      expect(hits).toBe(1);
      await allowed.close();
    } finally {
      await agent.close();
      await new Promise((r) => server.close(r));
    }
  });

  it('keeps only the start of a large error body, and retries a 503', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(503, { 'retry-after': '3' });
      res.end('x'.repeat(1_000_000));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const agent = guardedAgent(
      new SsrfGuard({ allowLoopback: true, allowPrivate: false }, resolver),
      {
        connectTimeoutMs: 1000,
        responseTimeoutMs: 1000,
      },
    );
    const result = await sendWebhook(agent, new URL(`http://127.0.0.1:${port}/`), {}, '{}');
    expect(result).toMatchObject({ outcome: 'retry', statusCode: 503, retryAfterMs: 3000 });
    expect(result.error?.length).toBe('HTTP 503: '.length + 512);
    await agent.close();
    await new Promise((r) => server.close(r));
  });

  it('does not follow redirects', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(302, { location: 'http://169.254.169.254/' });
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const agent = guardedAgent(
      new SsrfGuard({ allowLoopback: true, allowPrivate: false }, resolver),
      {
        connectTimeoutMs: 1000,
        responseTimeoutMs: 1000,
      },
    );
    const result = await sendWebhook(agent, new URL(`http://127.0.0.1:${port}/`), {}, '{}');
    expect(result).toMatchObject({ outcome: 'give-up', statusCode: 302 });
    expect(result.error).toContain('not followed');
    await agent.close();
    await new Promise((r) => server.close(r));
  });
});

describe('header templates', () => {
  const env = { LG_WEBHOOK_A: 'alpha', LG_WEBHOOK_B: 'beta', SECRET: 'nope', MY_C: 'gamma' };

  it('resolves several templates mixed with literals', () => {
    expect(
      resolveWebhookHeaders(
        { 'X-One': 'k=${{ env.LG_WEBHOOK_A }};${{env.LG_WEBHOOK_B}}', 'X-Two': 'plain' },
        'LG_WEBHOOK_',
        env,
      ),
    ).toEqual({ 'X-One': 'k=alpha;beta', 'X-Two': 'plain' });
  });

  it('uses a custom prefix', () => {
    expect(resolveWebhookHeaders({ 'X-C': '${{ env.MY_C }}' }, 'MY_', env)).toEqual({
      'X-C': 'gamma',
    });
  });

  it.each([
    [{ 'X-K': '${{ env.SECRET }}' }, 'environment variable SECRET may not be used'],
    [{ 'X-K': '${{ env.LG_WEBHOOK_MISSING }}' }, 'LG_WEBHOOK_MISSING is not set'],
    [{ 'X-K': '${{ secrets.X }}' }, 'unsupported template'],
    [{ 'Webhook-Signature': 'x' }, 'set by the webhook sender'],
    [{ 'Content-Type': 'text/plain' }, 'set by the webhook sender'],
    [{ 'Bad Header': 'x' }, 'not a valid HTTP header name'],
  ])('refuses %j', (headers, message) => {
    expect(() => resolveWebhookHeaders(headers, 'LG_WEBHOOK_', env)).toThrow(message);
  });
});

describe('signatures', () => {
  it('are accepted by the standardwebhooks library, with every rotated secret', () => {
    const first = `whsec_${randomBytes(32).toString('base64')}`;
    const second = `whsec_${randomBytes(24).toString('base64')}`;
    const signer = WebhookSigner.fromSecrets(`${first} ${second}`, 'TEST');
    const body = JSON.stringify({ run_id: 'r', status: 'success', text: 'ünïcode' });
    const now = Math.floor(Date.now() / 1000);
    const signature = signer?.sign('msg_1', now, body) ?? '';
    expect(signature.split(' ')).toHaveLength(2);
    for (const secret of [first, second]) {
      const headers = {
        'webhook-id': 'msg_1',
        'webhook-timestamp': String(now),
        'webhook-signature': signature,
      };
      expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    }
    const other = `whsec_${randomBytes(32).toString('base64')}`;
    expect(() =>
      new Webhook(other).verify(body, {
        'webhook-id': 'msg_1',
        'webhook-timestamp': String(now),
        'webhook-signature': signature,
      }),
    ).toThrow();
  });

  it('no secret means no signer; a bad secret names its source', () => {
    expect(WebhookSigner.fromSecrets(undefined, 'X')).toBeUndefined();
    expect(WebhookSigner.fromSecrets('  ', 'X')).toBeUndefined();
    expect(() => WebhookSigner.fromSecrets('whsec_***', 'GRAPHDOCK_WEBHOOK_SECRET')).toThrow(
      /GRAPHDOCK_WEBHOOK_SECRET/,
    );
    expect(() => WebhookSigner.fromSecrets('whsec_c2hvcnQ=', 'X')).toThrow(/16/);
  });
});

describe('retries', () => {
  const settings = { retryBaseMs: 1000, retryMaxMs: 10_000 };

  it('backs off exponentially with at most one base of jitter, capped', () => {
    expect(retryDelayMs(1, settings, undefined, () => 0)).toBe(1000);
    expect(retryDelayMs(2, settings, undefined, () => 0)).toBe(2000);
    expect(retryDelayMs(3, settings, undefined, () => 0.5)).toBe(4500);
    expect(retryDelayMs(10, settings, undefined, () => 0)).toBe(10_000);
    expect(retryDelayMs(1, settings, undefined, () => 0.999)).toBeLessThan(2000);
  });

  it('never retries sooner than Retry-After, which is capped at an hour', () => {
    expect(retryDelayMs(1, settings, 30_000, () => 0)).toBe(30_000);
    expect(retryDelayMs(3, settings, 10, () => 0)).toBe(4000);
    expect(retryDelayMs(1, settings, 99_999_999, () => 0)).toBe(3_600_000);
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfter('7')).toBe(7000);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });
});

describe('payload', () => {
  const run: RunSnapshot = {
    run_id: 'r',
    thread_id: 't',
    assistant_id: 'a',
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:01.000Z',
    status: 'success',
    metadata: {},
    kwargs: { input: 1 },
    multitask_strategy: 'enqueue',
    run_started_at: '2026-01-01T00:00:00.500Z',
    run_ended_at: null,
    error: null,
  };

  it('omits run_ended_at until ended, values for stateless runs, error unless failed', () => {
    const p = webhookPayload(run, undefined, new Date('2026-01-01T00:00:02Z'));
    expect(p).not.toHaveProperty('run_ended_at');
    expect(p).not.toHaveProperty('values');
    expect(p).not.toHaveProperty('error');
    expect(p.webhook_sent_at).toBe('2026-01-01T00:00:02.000Z');
    const failed = webhookPayload(
      {
        ...run,
        status: 'error',
        run_ended_at: run.updated_at,
        error: { error: 'E', message: 'm' },
      },
      { a: 1 },
      new Date(),
    );
    expect(failed).toMatchObject({ values: { a: 1 }, error: { error: 'E', message: 'm' } });
    expect(failed.run_ended_at).toBe(run.updated_at);
  });

  it('masks query values and passwords in the listing', () => {
    expect(maskedUrl('https://u:p@h.example/x?token=abc&y=1')).toBe(
      'https://u:***@h.example/x?token=***&y=***',
    );
  });
});
