// The HTTP side of deliveries: undici's connection pool behind the SSRF guard. Loaded with the
// first delivery (see module.ts): undici is the largest package of the webhook context (about
// 110 modules, 25 MiB resident), which a runtime whose runs ask for no webhooks never needs.
import { isIP } from 'node:net';
import { Agent, buildConnector } from 'undici';
import type { SsrfGuard } from './guard.js';

export { sendWebhook } from './sender.js';

/**
 * An undici dispatcher whose every new connection passes the guard. IP literals never reach
 * a socket's lookup, so they are checked before connecting. Redirects are not followed.
 */
export function guardedAgent(
  guard: SsrfGuard,
  options: { connectTimeoutMs: number; responseTimeoutMs: number },
): Agent {
  const connect = buildConnector({ timeout: options.connectTimeoutMs, lookup: guard.lookup() });
  return new Agent({
    headersTimeout: options.responseTimeoutMs,
    bodyTimeout: options.responseTimeoutMs,
    keepAliveTimeout: 10_000,
    connections: 32,
    connect: (opts, callback) => {
      const host = opts.hostname.replace(/^\[|\]$/g, '');
      if (!isIP(host)) return connect(opts, callback);
      guard.addresses(host).then(
        () => connect(opts, callback),
        (err: Error) => callback(err, null),
      );
    },
  });
}
