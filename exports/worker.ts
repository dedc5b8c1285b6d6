// The in-process side of bulk export, in the api: spawns scheduled exports' windows and either
// executes runs itself (one at a time by default) or, when the operator runs them as Kubernetes
// Jobs, publishes the exports for it. A poll, not a hot path: exports take minutes, a second of delay is nothing.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from '../common/logging/index.js';
import type { ExportRunner } from './runner.js';
import type { ExportService } from './service.js';
import type { ExportStore } from './store.js';

export interface ExportWorkerSettings {
  pollMs: number;
  /** Execute runs here (no operator); false: only schedule. */
  executeRuns: boolean;
  /** Jobs executor: publishes exports for the operator (BulkExport resources) each tick. */
  publish?: () => Promise<void>;
  concurrency: number;
}

export class ExportWorker {
  private timer: NodeJS.Timeout | undefined;
  private readonly active = new Map<string, Promise<unknown>>();
  private ticking = false;
  private readonly owner = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;

  constructor(
    private readonly service: ExportService,
    private readonly store: ExportStore,
    private readonly runner: ExportRunner,
    private readonly settings: ExportWorkerSettings,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.settings.pollMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await Promise.allSettled([...this.active.values()]);
  }

  private async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      await this.service.spawnDue(new Date());
      await this.settings.publish?.();
      while (this.settings.executeRuns && this.active.size < this.settings.concurrency) {
        const id = await this.store.nextClaimable([...this.active.keys()]);
        if (!id) break;
        const run = this.runner.execute(id, this.owner).then(
          (outcome) => this.logger.debug({ exportRun: id, outcome }, 'export run attempt ended'),
          (err: unknown) => this.logger.error({ err, exportRun: id }, 'export run attempt crashed'),
        );
        this.active.set(id, run);
        void run.finally(() => this.active.delete(id));
      }
    } catch (err) {
      this.logger.warn({ err }, 'bulk export tick failed');
    } finally {
      this.ticking = false;
    }
  }
}
