// Wake-ups between processes: LISTEN/NOTIFY on one dedicated connection, echoed in-process so a
// local listener never waits for the round trip. A hint only: listeners also poll.
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import pg from 'pg';
import type { Logger } from '../../common/logging/index.js';
import type { Pool } from '../../common/db/index.js';

export const CHANNELS = {
  /** A run became claimable; payload: its thread id, or empty. */
  runs: 'graphdock_runs',
  /** Events were appended to a run's log; payload: run id. */
  events: 'graphdock_run_events',
  /** A cancel was requested; payload: run id. */
  cancel: 'graphdock_run_cancel',
  /** Webhook deliveries became due (sent inside the transaction that queued them). */
  webhooks: 'graphdock_webhooks',
} as const;
export type Channel = (typeof CHANNELS)[keyof typeof CHANNELS];

const STARTED = 'started:';

/**
 * The `runs` payload for a run that started at once on the worker of the process that created
 * it: thread streams still learn of it, but no worker needs to look for something to claim.
 */
export function startedPayload(threadId: string): string {
  return STARTED + threadId;
}

/** Whether a `runs` payload may mean a run is waiting to be claimed. */
export function isClaimable(payload: string): boolean {
  return !payload.startsWith(STARTED);
}

/** The thread a `runs` payload names (empty or `*` when it names none). */
export function threadOfRunsPayload(payload: string): string {
  return payload.startsWith(STARTED) ? payload.slice(STARTED.length) : payload;
}

export class Notifier {
  private readonly emitter = new EventEmitter();
  /** Tags this process's NOTIFYs, so their echo on our own LISTEN connection is dropped. */
  private readonly origin = randomUUID();
  private client: pg.Client | undefined;
  private stopped = false;
  private everConnected = false;

  constructor(
    private readonly databaseUrl: string,
    private readonly pool: Pool,
    private readonly logger: Logger,
  ) {
    this.emitter.setMaxListeners(0);
  }

  async start(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.databaseUrl,
      application_name: 'graphdock-listen',
    });
    client.on('notification', (n) => {
      const raw = n.payload ?? '';
      const split = raw.indexOf('|');
      // Local listeners were already woken by notify(); only other processes' messages count.
      if (split < 0 || raw.slice(0, split) === this.origin) return;
      this.emitter.emit(n.channel, raw.slice(split + 1));
    });
    client.on('error', (err) => {
      this.logger.warn({ err }, 'notification connection failed; reconnecting');
      this.client = undefined;
      if (!this.stopped) setTimeout(() => void this.start().catch(() => undefined), 1000).unref();
    });
    await client.connect();
    for (const channel of Object.values(CHANNELS)) await client.query(`LISTEN ${channel}`);
    const reconnected = this.everConnected;
    this.everConnected = true;
    this.client = client;
    // Notifications sent while we were disconnected are lost: every waiter looks again.
    if (reconnected) for (const channel of Object.values(CHANNELS)) this.emitter.emit(channel, '*');
  }

  on(channel: Channel, listener: (payload: string) => void): () => void {
    this.emitter.on(channel, listener);
    return () => this.emitter.off(channel, listener);
  }

  /** The NOTIFY payload that wakes other processes' listeners but not this one's (see `origin`). */
  remotePayload(payload: string): string {
    return `${this.origin}|${payload}`;
  }

  /** Wakes this process's listeners only (the NOTIFY for others went out with a transaction). */
  emitLocal(channel: Channel, payload = ''): void {
    this.emitter.emit(channel, payload);
  }

  /** Wakes local listeners now and remote ones through PostgreSQL. */
  async notify(channel: Channel, payload = ''): Promise<void> {
    this.emitter.emit(channel, payload);
    await this.pool.query('SELECT pg_notify($1, $2)', [channel, this.remotePayload(payload)]);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.client?.end().catch(() => undefined);
  }
}

/**
 * NOTIFY from inside a transaction: PostgreSQL delivers it on commit (and never on rollback) to
 * every listening process, this one included, since the origin tag is no process's own.
 */
export async function notifyOnCommit(
  db: Pick<Pool, 'query'>,
  channel: Channel,
  payload = '',
): Promise<void> {
  await db.query('SELECT pg_notify($1, $2)', [channel, `transaction|${payload}`]);
}

/** Resolves on the first of: `channel` fires with a matching payload, `ms` pass, `signal` aborts. */
export function waitFor(
  notifier: Notifier,
  channel: Channel,
  matches: (payload: string) => boolean,
  ms: number,
  signal?: AbortSignal,
): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      off();
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const off = notifier.on(channel, (payload) => matches(payload) && done());
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done);
  });
}
