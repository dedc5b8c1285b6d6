// transport.ts (undici) on demand: loaded by the first delivery, closed at stop if it was.
import type { Agent } from 'undici';
import type { SsrfGuard } from './guard.js';
import type { sendWebhook } from './sender.js';

export class WebhookTransport {
  private loaded: Promise<{ agent: Agent; sendWebhook: typeof sendWebhook }> | undefined;

  constructor(
    private readonly guard: SsrfGuard,
    private readonly options: { connectTimeoutMs: number; responseTimeoutMs: number },
  ) {}

  get() {
    this.loaded ??= import('./transport.js').then((t) => ({
      agent: t.guardedAgent(this.guard, this.options),
      sendWebhook: t.sendWebhook,
    }));
    return this.loaded;
  }

  async close(): Promise<void> {
    if (this.loaded) await (await this.loaded).agent.close();
  }
}
