// A process that listens alone skips the NOTIFYs of committed changes; one that starts beside it
// is answered, and heard from, before its own start() returns; one that leaves is noticed by the
// next recount.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPool, type Pool } from '../../common/db/index.js';
import { createLogger } from '../../common/logging/index.js';
import { CHANNELS, Notifier } from '../../runtime/runs/index.js';
import { countingPool } from '../support/counting-pool.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';

const logger = createLogger({ level: 'silent' });
const RECOUNT_MS = 200;

let db: TestDatabase;
let pool: Pool;

beforeAll(async () => {
  db = await createTestDatabase(inject('pgAdminUrl'));
  pool = createPool({ url: db.url, max: 4 });
});
afterAll(async () => {
  await pool?.end();
  await db?.drop();
});

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('NOTIFYs and peers', () => {
  it('skips them while alone, sends them once another process listens, and skips again after it left', async () => {
    const a = countingPool(pool);
    const first = new Notifier(db.url, a.pool, logger, RECOUNT_MS);
    await first.start();
    try {
      await first.notifyCommitted(CHANNELS.events, first.remotePayload('nobody'));
      await first.notify(CHANNELS.runs);
      expect(a.queries()).toBe(0);

      // A connection string naming its own application must still be counted as a listener.
      const url = new URL(db.url);
      url.searchParams.set('application_name', 'someone-else');
      const second = new Notifier(url.toString(), countingPool(pool).pool, logger, RECOUNT_MS);
      const heard: string[] = [];
      second.on(CHANNELS.events, (p) => heard.push(p));
      const started = Date.now();
      await second.start();
      try {
        // Answered, not timed out: the first process counts the second before start() returns.
        expect(Date.now() - started).toBeLessThan(900);
        await first.notifyCommitted(CHANNELS.events, first.remotePayload('for-second'));
        expect(a.queries()).toBe(1);
        await until(() => heard.includes('for-second'), 'the second process to hear it');
        // Several recounts later the first still sees the second.
        await new Promise((r) => setTimeout(r, RECOUNT_MS * 3));
        await first.notifyCommitted(CHANNELS.events, first.remotePayload('again'));
        expect(a.queries()).toBe(2);
        await until(() => heard.includes('again'), 'the second NOTIFY');
      } finally {
        await second.stop();
      }

      await new Promise((r) => setTimeout(r, RECOUNT_MS * 3));
      await first.notifyCommitted(CHANNELS.events, first.remotePayload('nobody-again'));
      expect(a.queries()).toBe(2);
    } finally {
      await first.stop();
    }
  });

  it('a newcomer that counts a peer sends to it from the start', async () => {
    const first = new Notifier(db.url, countingPool(pool).pool, logger, RECOUNT_MS);
    const heard: string[] = [];
    first.on(CHANNELS.cancel, (p) => heard.push(p));
    await first.start();
    const b = countingPool(pool);
    const second = new Notifier(db.url, b.pool, logger, RECOUNT_MS);
    await second.start();
    try {
      await second.notify(CHANNELS.cancel, 'run-1');
      expect(b.queries()).toBe(1);
      await until(() => heard.includes('run-1'), 'the first process to hear it');
    } finally {
      await second.stop();
      await first.stop();
    }
  });
});
