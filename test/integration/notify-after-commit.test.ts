// NOTIFYs for committed changes leave the statements that made them: the notifier sends those of
// one turn together afterwards, and the run store hands them over only for statements that
// committed on their own; inside a caller's transaction the statement still NOTIFYs, at commit.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPool, withTransaction, type Pool } from '../../common/db/index.js';
import { createLogger } from '../../common/logging/index.js';
import { CHANNELS, Notifier, RunStore } from '../../runtime/runs/index.js';
import { countingPool } from '../support/counting-pool.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';

let db: TestDatabase;
let pool: Pool;
let listener: pg.Client;
const heard: { channel: string; payload: string }[] = [];
const logger = createLogger({ level: 'silent' });

beforeAll(async () => {
  db = await createTestDatabase(inject('pgAdminUrl'));
  pool = createPool({ url: db.url, max: 4 });
  listener = new pg.Client({ connectionString: db.url });
  await listener.connect();
  listener.on('notification', (n) => heard.push({ channel: n.channel, payload: n.payload ?? '' }));
  for (const channel of [CHANNELS.runs, CHANNELS.events]) await listener.query(`LISTEN ${channel}`);
});
afterAll(async () => {
  await listener?.end();
  await pool?.end();
  await db?.drop();
});

async function heardAll(payloads: string[]): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (payloads.every((p) => heard.some((h) => h.payload === p))) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(
    `not heard: ${payloads.filter((p) => !heard.some((h) => h.payload === p)).join(', ')}`,
  );
}

describe('Notifier.notifyCommitted', () => {
  it('sends the NOTIFYs of one turn in one statement, and notify() resolves once they went', async () => {
    const counted = countingPool(pool);
    const notifier = new Notifier(db.url, counted.pool, logger);
    const tag = randomUUID();
    const payloads = Array.from({ length: 5 }, (_, i) => `${tag}-${i}`);
    const sent = payloads.map((p) => notifier.notifyCommitted(CHANNELS.events, p));
    const local: string[] = [];
    notifier.on(CHANNELS.runs, (p) => local.push(p));
    await Promise.all([...sent, notifier.notify(CHANNELS.runs, `${tag}-runs`)]);
    expect(counted.queries()).toBe(1);
    expect(local).toEqual([`${tag}-runs`]);
    await heardAll([...payloads, notifier.remotePayload(`${tag}-runs`)]);
    // What arrives while a batch is out goes in the next one, together.
    const later = [notifier.notifyCommitted(CHANNELS.events, `${tag}-a`)];
    await new Promise((r) => setImmediate(r));
    later.push(
      notifier.notifyCommitted(CHANNELS.events, `${tag}-b`),
      notifier.notifyCommitted(CHANNELS.events, `${tag}-c`),
    );
    await Promise.all(later);
    expect(counted.queries()).toBe(3);
    await heardAll([`${tag}-a`, `${tag}-b`, `${tag}-c`]);
  });

  it('never rejects: a NOTIFY that cannot be sent is a lost hint', async () => {
    const broken = createPool({ url: db.url, max: 1 });
    await broken.end();
    const notifier = new Notifier(db.url, broken, logger);
    await expect(notifier.notifyCommitted(CHANNELS.events, 'lost')).resolves.toBeUndefined();
  });
});

describe('RunStore NOTIFYs', () => {
  const events = (runId: string) => ({
    events: [{ seq: 5, event: 'values', data: { n: 1 } }],
    notify: { channel: CHANNELS.events, payload: `${runId}-appended` },
  });

  it('hands them to the notifier after a statement that committed on its own', async () => {
    const handed: string[] = [];
    const store = new RunStore(pool, undefined, (_channel, payload) => handed.push(payload));
    const runId = randomUUID();
    await store.appendEvents(runId, events(runId).events, events(runId).notify);
    expect(handed).toEqual([`${runId}-appended`]);
    // The statement itself sent nothing: only the notifier would have.
    await new Promise((r) => setTimeout(r, 200));
    expect(heard.some((h) => h.payload === `${runId}-appended`)).toBe(false);
    expect((await store.eventsAfter(runId, 0)).events.map((e) => e.seq)).toEqual([5]);
  });

  it("NOTIFYs inside a caller's transaction, delivered at its commit", async () => {
    const handed: string[] = [];
    const store = new RunStore(pool, undefined, (_channel, payload) => handed.push(payload));
    const runId = randomUUID();
    await withTransaction(pool, async (client) => {
      await store.finish(runId, 'success', null, client, events(runId));
      await new Promise((r) => setTimeout(r, 100));
      expect(heard.some((h) => h.payload === `${runId}-appended`)).toBe(false);
    });
    expect(handed).toEqual([]);
    await heardAll([`${runId}-appended`]);
  });
});
