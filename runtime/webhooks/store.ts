// SQL for the webhook outbox and its attempt log. Nothing outside this file writes these tables.
import { jsonb, type Pool, type PoolClient } from '../../common/db/index.js';
import type { RunSnapshot } from './payload.js';

export type DeliveryStatus = 'pending' | 'delivering' | 'delivered' | 'failed';

export interface DeliveryRow {
  delivery_id: string;
  run_id: string;
  thread_id: string;
  url: string;
  run: RunSnapshot;
  stateful: boolean;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date;
  lease_expires_at: Date | null;
  last_error: string | null;
  created_at: Date;
  updated_at: Date;
  delivered_at: Date | null;
}

export interface AttemptRow {
  delivery_id: string;
  attempt: number;
  started_at: Date;
  status_code: number | null;
  latency_ms: number;
  error: string | null;
}

export interface NewDelivery {
  run_id: string;
  thread_id: string;
  url: string;
  run: RunSnapshot;
  stateful: boolean;
}

/** What happens after an attempt: delivered, tried again at `retryAt`, or given up. */
export type AttemptOutcome =
  { status: 'delivered' } | { status: 'pending'; retryAt: Date } | { status: 'failed' };

export class WebhookStore {
  constructor(private readonly pool: Pool) {}

  /** One row per run, whichever code path finishes it and however often. */
  async insert(deliveries: NewDelivery[], db: PoolClient): Promise<number> {
    if (!deliveries.length) return 0;
    const { rowCount } = await db.query(
      `INSERT INTO webhook_deliveries (run_id, thread_id, url, run, stateful)
       SELECT d.run_id, d.thread_id, d.url, d.run, d.stateful
       FROM jsonb_to_recordset($1::jsonb) AS d(run_id uuid, thread_id uuid, url text, run jsonb, stateful boolean)
       ON CONFLICT (run_id) DO NOTHING`,
      [jsonb(deliveries)],
    );
    return rowCount ?? 0;
  }

  /**
   * Leases up to `limit` due deliveries (and any whose sender died mid-attempt). SKIP LOCKED
   * lets every replica claim side by side without ever handing one row to two senders.
   */
  async claim(limit: number, leaseSeconds: number): Promise<DeliveryRow[]> {
    const { rows } = await this.pool.query<DeliveryRow>({
      name: 'webhooks.claim',
      text: `WITH due AS (
          SELECT delivery_id FROM webhook_deliveries
          WHERE (status = 'pending' AND next_attempt_at <= now())
             OR (status = 'delivering' AND lease_expires_at < now())
          ORDER BY next_attempt_at
          LIMIT $1
          FOR UPDATE SKIP LOCKED
        )
        UPDATE webhook_deliveries d SET status = 'delivering', attempts = d.attempts + 1,
          lease_expires_at = now() + make_interval(secs => $2::float8), updated_at = now()
        FROM due WHERE d.delivery_id = due.delivery_id
        RETURNING d.*`,
      values: [limit, leaseSeconds],
    });
    return rows;
  }

  /**
   * Records an attempt and its outcome together. The attempt number fences a sender whose
   * lease ran out and whose row another sender took over: its late result is dropped.
   */
  async settleAttempt(
    delivery: DeliveryRow,
    attempt: Omit<AttemptRow, 'delivery_id' | 'attempt'>,
    outcome: AttemptOutcome,
  ): Promise<boolean> {
    // One statement, so one round trip and atomic without an explicit transaction.
    const { rows } = await this.pool.query<{ settled: number }>({
      name: 'webhooks.settle',
      text: `WITH settled AS (
          UPDATE webhook_deliveries SET status = $3, last_error = $4, updated_at = now(),
            lease_expires_at = NULL, next_attempt_at = coalesce($5, next_attempt_at),
            delivered_at = CASE WHEN $3 = 'delivered' THEN now() ELSE NULL END
          WHERE delivery_id = $1 AND attempts = $2 AND status = 'delivering'
          RETURNING delivery_id
        ), logged AS (
          INSERT INTO webhook_attempts (delivery_id, attempt, started_at, status_code, latency_ms, error)
          SELECT delivery_id, $2, $6, $7, $8, $4 FROM settled
          ON CONFLICT DO NOTHING
        )
        SELECT count(*)::int AS settled FROM settled`,
      values: [
        delivery.delivery_id,
        delivery.attempts,
        outcome.status,
        attempt.error,
        outcome.status === 'pending' ? outcome.retryAt : null,
        attempt.started_at,
        attempt.status_code,
        attempt.latency_ms,
      ],
    });
    return (rows[0]?.settled ?? 0) > 0;
  }

  /** Deletes finished deliveries (and their attempts) last touched before `days` ago. */
  async purgeFinished(days: number): Promise<number> {
    const { rowCount } = await this.pool.query(
      `DELETE FROM webhook_deliveries WHERE delivery_id IN (
         SELECT delivery_id FROM webhook_deliveries
         WHERE status IN ('delivered', 'failed') AND updated_at < now() - make_interval(days => $1)
         LIMIT 10000)`,
      [days],
    );
    return rowCount ?? 0;
  }

  async forRun(
    runId: string,
    threadId?: string,
  ): Promise<{ delivery: DeliveryRow; attempts: AttemptRow[] }[]> {
    const { rows } = await this.pool.query<DeliveryRow>(
      `SELECT * FROM webhook_deliveries WHERE run_id = $1 AND ($2::uuid IS NULL OR thread_id = $2)`,
      [runId, threadId ?? null],
    );
    if (!rows.length) return [];
    const { rows: attempts } = await this.pool.query<AttemptRow>(
      `SELECT * FROM webhook_attempts WHERE delivery_id = ANY($1::uuid[]) ORDER BY attempt`,
      [rows.map((r) => r.delivery_id)],
    );
    return rows.map((delivery) => ({
      delivery,
      attempts: attempts.filter((a) => a.delivery_id === delivery.delivery_id),
    }));
  }
}
