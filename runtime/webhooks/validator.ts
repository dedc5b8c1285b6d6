// Checks a webhook URL where a run (or cron) is created: the URL rules, then the host's DNS
// answers. A host that does not resolve now is accepted (it may later); the send re-checks all.
import { invalid } from '../../common/errors/index.js';
import type { Logger } from '../../common/logging/index.js';
import { BlockedDestinationError, type SsrfGuard } from './guard.js';
import { checkWebhookUrl, type UrlPolicy, type UrlRefusal } from './url-policy.js';

const DNS_TIMEOUT_MS = 2_000;

export class WebhookUrlValidator {
  constructor(
    private readonly policy: UrlPolicy,
    private readonly guard: SsrfGuard,
    private readonly logger: Logger,
  ) {}

  /** The refusal, or undefined when the URL may be used. */
  async check(raw: string): Promise<UrlRefusal | undefined> {
    const checked = checkWebhookUrl(raw, this.policy);
    if (!checked.ok) return { rule: checked.rule, reason: checked.reason };
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.guard.addresses(checked.host),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('DNS lookup timed out')), DNS_TIMEOUT_MS);
        }),
      ]);
    } catch (err) {
      if (err instanceof BlockedDestinationError) return { rule: err.rule, reason: err.message };
      this.logger.debug({ err, host: checked.host }, 'webhook host did not resolve at creation');
    } finally {
      clearTimeout(timer);
    }
    return undefined;
  }

  /** Throws a 422 naming the failed rule; `loc` is where the URL sits in the request. */
  async validate(raw: string, loc: (string | number)[] = ['body', 'webhook']): Promise<void> {
    const refusal = await this.check(raw);
    if (refusal) throw invalid(loc, refusal.reason, `webhook_url.${refusal.rule}`);
  }
}
