// Leader election on a coordination.k8s.io Lease, in the manner of client-go's: acquire when the
// lease is free or its holder has not renewed within the lease duration (measured on our own
// clock from when we last saw the record change, so clock skew does not matter), renew every
// retry period, and stop acting when renewal has failed for the renew deadline.
import {
  CoordinationV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import type { Logger } from '../../common/logging/index.js';
import { describeError, isConflict, isNotFound } from './errors.js';

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  onStartedLeading(): void;
  onStoppedLeading(): void;
  logger: Logger;
}

interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

/** Lease times are MicroTime: RFC 3339 with six fractional digits. */
const microTime = (d = new Date()) => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

export class LeaderElector {
  private readonly api: CoordinationV1Api;
  private timer: NodeJS.Timeout | undefined;
  private leading = false;
  private lastRenewedAt = 0;
  private observed: { record: string; at: number } | undefined;
  private stopped = false;

  constructor(
    kubeConfig: KubeConfig,
    private readonly options: LeaderElectionOptions,
  ) {
    this.api = kubeConfig.makeApiClient(CoordinationV1Api);
  }

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    void this.tick();
  }

  /** Stops campaigning and, when leading, releases the lease so a standby takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    if (!this.leading) return;
    this.setLeading(false);
    try {
      const lease = await this.api.readNamespacedLease({
        name: this.options.name,
        namespace: this.options.namespace,
      });
      if (lease.spec?.holderIdentity !== this.options.identity) return;
      await this.patch({
        metadata: { resourceVersion: lease.metadata?.resourceVersion },
        spec: { holderIdentity: null, leaseDurationSeconds: 1, renewTime: microTime() },
      });
    } catch (err) {
      this.options.logger.warn({ err: describeError(err) }, 'could not release the lease');
    }
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    let renewed = false;
    try {
      renewed = await this.tryAcquireOrRenew();
    } catch (err) {
      this.options.logger.warn({ err: describeError(err) }, 'lease acquire/renew failed');
    }
    if (this.stopped) return;
    const now = Date.now();
    if (renewed) {
      this.lastRenewedAt = now;
      if (!this.leading) this.setLeading(true);
    } else if (this.leading && now - this.lastRenewedAt > this.options.renewDeadlineMs) {
      this.setLeading(false);
    }
    this.timer = setTimeout(() => void this.tick(), this.options.retryPeriodMs);
  }

  private setLeading(leading: boolean): void {
    this.leading = leading;
    this.options.logger.info(
      { lease: `${this.options.namespace}/${this.options.name}`, identity: this.options.identity },
      leading ? 'became leader' : 'stopped leading',
    );
    if (leading) this.options.onStartedLeading();
    else this.options.onStoppedLeading();
  }

  private patch(body: object) {
    return this.api.patchNamespacedLease(
      { name: this.options.name, namespace: this.options.namespace, body },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  private async tryAcquireOrRenew(): Promise<boolean> {
    const { name, namespace, identity, leaseDurationMs } = this.options;
    const durationSeconds = Math.max(1, Math.round(leaseDurationMs / 1000));
    const now = microTime();
    let lease;
    try {
      lease = await this.api.readNamespacedLease({ name, namespace });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      try {
        await this.api.createNamespacedLease({
          namespace,
          body: {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name, namespace },
            spec: {
              holderIdentity: identity,
              leaseDurationSeconds: durationSeconds,
              acquireTime: now,
              renewTime: now,
              leaseTransitions: 0,
            } as LeaseSpec as never,
          },
        });
        return true;
      } catch (createErr) {
        if (isConflict(createErr)) return false;
        throw createErr;
      }
    }
    const spec = (lease.spec ?? {}) as unknown as LeaseSpec;
    const holder = spec.holderIdentity ?? '';
    const record = `${holder}|${String(spec.renewTime)}|${spec.leaseDurationSeconds}`;
    if (this.observed?.record !== record) this.observed = { record, at: Date.now() };
    const heldByOther = holder !== '' && holder !== identity;
    const expired =
      this.observed.at + (spec.leaseDurationSeconds ?? durationSeconds) * 1000 < Date.now();
    if (heldByOther && !expired) return false;

    const mine = holder === identity;
    try {
      await this.patch({
        // resourceVersion makes the write conditional: a concurrent taker gets a 409.
        metadata: { resourceVersion: lease.metadata?.resourceVersion },
        spec: {
          holderIdentity: identity,
          leaseDurationSeconds: durationSeconds,
          renewTime: now,
          // Unchanged on renewal: merge patch leaves an omitted field alone.
          acquireTime: mine ? undefined : now,
          leaseTransitions: (spec.leaseTransitions ?? 0) + (mine || holder === '' ? 0 : 1),
        },
      });
      return true;
    } catch (err) {
      if (isConflict(err)) return false;
      throw err;
    }
  }
}
