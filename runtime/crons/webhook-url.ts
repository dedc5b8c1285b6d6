// Check of a cron's `webhook` at creation. A local stand-in: the webhooks context's shared
// validator (domains, ports, SSRF rules) replaces this one function when both land on main.
import { invalid } from '../../common/errors/index.js';

export function validateCronWebhookUrl(url: string, loc: (string | number)[]): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid(loc, 'Invalid webhook URL: must be an absolute http(s) URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw invalid(loc, `Invalid webhook URL: scheme "${parsed.protocol}" is not http or https`);
  if (!parsed.hostname) throw invalid(loc, 'Invalid webhook URL: the host is empty');
}
