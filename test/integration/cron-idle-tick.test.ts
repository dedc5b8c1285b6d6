// What the cron scheduler costs a replica with nothing due: every replica ticks once a second,
// so an idle tick must be one statement, not a transaction (BEGIN, a locking read, COMMIT).
// Firing due crons is covered end to end by crons.test.ts and crons-replicas.test.ts.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPool, type Pool } from '../../common/db/index.js';
import { createLogger } from '../../common/logging/index.js';
import { CronScheduler, CronStore } from '../../runtime/crons/index.js';
import type { RunService } from '../../runtime/runs/index.js';
import { observeClientQueries, type ClientQuery } from '../support/counting-pool.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';

let db: TestDatabase;
let pool: Pool;
let store: CronStore;
let scheduler: CronScheduler;
/** Where the statements sent go while a tick is observed. */
let sent: string[] | undefined;
let restoreQuery: (() => void) | undefined;
beforeAll(async () => {
  // Observed from before the pool exists, as the pool's client class is made with it.
  restoreQuery = observeClientQueries((q) => sent?.push(textOf(q).trim().split(/\s+/)[0]!));
  db = await createTestDatabase(inject('pgAdminUrl'));
  pool = createPool({ url: db.url });
  store = new CronStore(pool);
  // No run is created by these ticks; a tick that tried would fail on this empty service.
  scheduler = new CronScheduler(
    pool,
    store,
    {} as RunService,
    { tickMs: 1000 },
    createLogger({ level: 'silent' }),
  );
});
afterAll(async () => {
  restoreQuery?.();
  await pool?.end();
  await db?.drop();
});

const textOf = (q: ClientQuery) => (typeof q === 'string' ? q : (q.text ?? q.name ?? ''));

async function statementsOfTick(): Promise<{ fired: number; sent: string[] }> {
  const observed: string[] = [];
  sent = observed;
  try {
    return { fired: await scheduler.fireDue(), sent: observed };
  } finally {
    sent = undefined;
  }
}

async function insertCron(nextRunDate: string, enabled = true): Promise<string> {
  const assistantId = randomUUID();
  const cronId = randomUUID();
  await pool.query(
    `INSERT INTO assistants (assistant_id, graph_id, name) VALUES ($1, 'echo', 'a')`,
    [assistantId],
  );
  await pool.query(
    `INSERT INTO crons (cron_id, assistant_id, schedule, enabled, next_run_date)
     VALUES ($1, $2, '* * * * *', $3, $4)`,
    [cronId, assistantId, enabled, nextRunDate],
  );
  return cronId;
}

describe('an idle cron tick', () => {
  it('with no crons: one statement and no transaction', async () => {
    expect(await statementsOfTick()).toEqual({ fired: 0, sent: ['SELECT'] });
  });

  it('with crons due later, or disabled: one statement and no transaction', async () => {
    await insertCron(new Date(Date.now() + 3_600_000).toISOString());
    await insertCron(new Date(Date.now() - 3_600_000).toISOString(), false);
    expect(await statementsOfTick()).toEqual({ fired: 0, sent: ['SELECT'] });
    expect(await store.anyDue(pool)).toBe(false);
  });

  it('sees a cron that is due', async () => {
    const cronId = await insertCron(new Date(Date.now() - 1_000).toISOString());
    expect(await store.anyDue(pool)).toBe(true);
    await pool.query('DELETE FROM crons WHERE cron_id = $1', [cronId]);
    expect(await store.anyDue(pool)).toBe(false);
  });
});
