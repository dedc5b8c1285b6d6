// Queues webhooks of finished runs, inside the transaction that finishes them: a crash can
// never leave a finished run without its delivery row.
import type { PoolClient } from '../../common/db/index.js';
import { CHANNELS, notifyOnCommit } from '../runs/index.js';
import { snapshotOf, type FinishedRun } from './payload.js';
import type { WebhookStore } from './store.js';

export class WebhookOutbox {
  constructor(private readonly store: WebhookStore) {}

  async enqueue(runs: FinishedRun[], db: PoolClient): Promise<void> {
    const deliveries = runs.flatMap((run) => {
      const url = run.kwargs.webhook;
      if (typeof url !== 'string' || !url) return [];
      return [
        {
          run_id: run.run_id,
          thread_id: run.thread_id,
          url,
          run: snapshotOf(run),
          stateful: run.kwargs.temporary !== true,
        },
      ];
    });
    if (await this.store.insert(deliveries, db)) await notifyOnCommit(db, CHANNELS.webhooks);
  }
}
