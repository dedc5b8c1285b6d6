// The `webhooks.url` rules of langgraph.json, as a pure function of the URL. Host names are
// resolved and their addresses checked separately (guard.ts); IP literals are judged here.
import { isIP } from 'node:net';
import {
  classifyAddress,
  describeRefusal,
  isAllowedAddress,
  ruleFor,
  type AddressRules,
} from './addresses.js';

export interface UrlPolicy extends AddressRules {
  /** Exact hosts and `*.domain` wildcards (subdomains only); undefined: any host. */
  allowedDomains: string[] | undefined;
  requireHttps: boolean;
  /** undefined: any port. A URL without a port counts as 443 (https) or 80 (http). */
  allowedPorts: number[] | undefined;
  maxUrlLength: number;
}

export interface WebhookUrlSettings {
  allowed_domains?: string[] | undefined;
  require_https?: boolean | undefined;
  allowed_ports?: number[] | undefined;
  max_url_length?: number | undefined;
  disable_loopback?: boolean | undefined;
  disable_private_ips?: boolean | undefined;
}

export const DEFAULT_MAX_URL_LENGTH = 4096;

/** Defaults follow the reference server's code: loopback and private addresses refused. */
export function urlPolicyFrom(settings: WebhookUrlSettings = {}): UrlPolicy {
  return {
    allowedDomains: settings.allowed_domains?.map((d) => normalizeHost(d)),
    requireHttps: settings.require_https ?? false,
    allowedPorts: settings.allowed_ports,
    maxUrlLength: settings.max_url_length ?? DEFAULT_MAX_URL_LENGTH,
    allowLoopback: !(settings.disable_loopback ?? true),
    allowPrivate: !(settings.disable_private_ips ?? true),
  };
}

/** A refused URL: the rule (a `webhooks.url` key, or `url`, `scheme`, `ssrf`) and why. */
export interface UrlRefusal {
  rule: string;
  reason: string;
}

export type UrlCheck = { ok: true; url: URL; host: string } | ({ ok: false } & UrlRefusal);

// Names that reach cloud metadata services without resolving through public DNS.
const METADATA_HOSTS = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'metadata.amazonaws.com',
  'instance-data',
  'instance-data.ec2.internal',
]);

function normalizeHost(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
}

/** Exact entries match the host; `*.example.com` matches its subdomains, not example.com. */
export function domainAllowed(host: string, allowed: string[]): boolean {
  return allowed.some((entry) =>
    entry.startsWith('*.') ? host.endsWith(entry.slice(1)) : host === entry,
  );
}

const refuse = (rule: string, reason: string): UrlCheck => ({ ok: false, rule, reason });

export function checkWebhookUrl(raw: string, policy: UrlPolicy): UrlCheck {
  if (raw.length > policy.maxUrlLength)
    return refuse(
      'max_url_length',
      `Webhook URL too long: ${raw.length} characters, webhooks.url.max_url_length is ${policy.maxUrlLength}`,
    );
  if (raw.startsWith('/'))
    return policy.allowLoopback
      ? refuse('url', 'Relative webhook URLs are not supported by Graphdock; use an absolute URL')
      : refuse(
          'disable_loopback',
          'Relative webhook URLs (calls back into this server) are refused: webhooks.url.disable_loopback is true',
        );
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refuse('url', 'Webhook URL is not a valid absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return refuse('scheme', `Webhook URL must use http or https, not ${url.protocol}`);
  if (policy.requireHttps && url.protocol !== 'https:')
    return refuse('require_https', 'Webhook URL must use https (webhooks.url.require_https)');
  const host = normalizeHost(url.hostname);
  if (!host) return refuse('url', 'Invalid webhook hostname');
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  if (policy.allowedPorts && !policy.allowedPorts.includes(port))
    return refuse(
      'allowed_ports',
      `Webhook port ${port} not allowed by webhooks.url.allowed_ports (${policy.allowedPorts.join(', ')})`,
    );
  if (policy.allowedDomains && !domainAllowed(host, policy.allowedDomains))
    return refuse(
      'allowed_domains',
      `Webhook domain not allowed: ${host} is not in webhooks.url.allowed_domains`,
    );
  if (METADATA_HOSTS.has(host))
    return refuse('ssrf', `Webhook host blocked: ${host} is a cloud metadata endpoint`);
  if (host.endsWith('.localhost') && !policy.allowLoopback)
    return refuse(
      'disable_loopback',
      `Webhook host blocked: ${host} is a loopback name; allowed only with webhooks.url.disable_loopback: false`,
    );
  if (isIP(host)) {
    const verdict = classifyAddress(host);
    if (!isAllowedAddress(verdict, policy))
      return refuse(ruleFor(verdict), describeRefusal(host, verdict));
  }
  return { ok: true, url, host };
}
