// Crons through the official JS SDK (and raw HTTP where the SDK sends no such field): CRUD,
// search and count, validation, and firing on schedule with end_time, enabled and
// on_run_completed honoured. Six-field schedules (every second) keep the firing tests short.
import type { Cron, Run } from '@langchain/langgraph-sdk';
import { describe, expect, it } from 'vitest';
import { useRuntime } from '../support/fixture.js';

const rt = useRuntime({ env: { GRAPHDOCK_CRON_TICK_MS: '100', GRAPHDOCK_SLOW_STEP_MS: '1500' } });

const hi = (content: string) => ({ messages: [{ role: 'user', content }] });
const EVERY_SECOND = '* * * * * *';
const YEARLY = '0 0 1 1 *';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await fn();
    if (ok(value) || Date.now() > deadline) return value;
    await sleep(100);
  }
}

async function getCron(cronId: string): Promise<Cron> {
  const res = await rt.http(`/runs/crons/${cronId}`);
  expect(res.status).toBe(200);
  return (await res.json()) as Cron;
}

const scheduledFor = (run: Run) =>
  (run as Run & { kwargs: { scheduled_for: string } }).kwargs.scheduled_for;

/** A fresh assistant, so each test can filter on crons and threads of its own. */
async function assistant(name: string) {
  return rt.client.assistants.create({ graphId: 'echo', name });
}

describe('cron CRUD', () => {
  it('reports crons as available on /info', async () => {
    const info = (await (await rt.http('/info')).json()) as { flags: Record<string, boolean> };
    expect(info.flags.crons).toBe(true);
  });

  it('creates a stateless cron with the run payload, reads, updates and deletes it', async () => {
    const before = Date.now();
    const cron = await rt.client.crons.create('echo', {
      schedule: YEARLY,
      input: hi('new year'),
      metadata: { owner: 'crud' },
      config: { tags: ['t'] },
    });
    expect(cron).toMatchObject({
      assistant_id: '046b5dc7-2108-582c-9c6c-31d556d138f0',
      thread_id: null,
      schedule: YEARLY,
      timezone: null,
      end_time: null,
      enabled: true,
      on_run_completed: 'delete',
      metadata: { owner: 'crud' },
      payload: { input: hi('new year'), config: { tags: ['t'] } },
      user_id: null,
    });
    const next = new Date(cron.next_run_date);
    expect(next.getTime()).toBeGreaterThan(before);
    expect(next.toISOString()).toMatch(/-01-01T00:00:00\.000Z$/);
    expect(await getCron(cron.cron_id)).toEqual(cron);

    const updated = await rt.client.crons.update(cron.cron_id, {
      schedule: '30 6 * * *',
      endTime: '2099-01-01T00:00:00Z',
      enabled: false,
      metadata: { owner: 'crud', v: 2 },
      input: hi('morning'),
      onRunCompleted: 'keep',
    });
    expect(updated).toMatchObject({
      cron_id: cron.cron_id,
      schedule: '30 6 * * *',
      end_time: '2099-01-01T00:00:00.000Z',
      enabled: false,
      on_run_completed: 'keep',
      metadata: { owner: 'crud', v: 2 },
      payload: { input: hi('morning'), config: { tags: ['t'] } },
    });
    expect(updated.next_run_date).toMatch(/T06:30:00\.000Z$/);
    expect(new Date(updated.updated_at).getTime()).toBeGreaterThan(
      new Date(cron.updated_at).getTime(),
    );

    // end_time: null clears it.
    const cleared = await rt.http(`/runs/crons/${cron.cron_id}`, {
      method: 'PATCH',
      json: { end_time: null },
    });
    expect(((await cleared.json()) as Cron).end_time).toBeNull();

    await rt.client.crons.delete(cron.cron_id);
    expect((await rt.http(`/runs/crons/${cron.cron_id}`)).status).toBe(404);
    await expect(rt.client.crons.delete(cron.cron_id)).rejects.toThrow(/HTTP 404/);
  });

  it('creates a cron for a thread, and only for a thread that exists unless asked to create it', async () => {
    const thread = await rt.client.threads.create();
    const cron = await rt.client.crons.createForThread(thread.thread_id, 'echo', {
      schedule: YEARLY,
      input: hi('x'),
      multitaskStrategy: 'reject',
    });
    expect(cron).toMatchObject({
      thread_id: thread.thread_id,
      on_run_completed: null,
      payload: { multitask_strategy: 'reject' },
    });
    const missing = '00000000-0000-4000-8000-000000000001';
    await expect(
      rt.client.crons.createForThread(missing, 'echo', { schedule: YEARLY }),
    ).rejects.toThrow(/HTTP 404/);
    const created = await rt.client.crons.createForThread(missing, 'echo', {
      schedule: YEARLY,
      ifNotExists: 'create',
    });
    expect(created.thread_id).toBe(missing);
    expect((await rt.client.threads.get(missing)).thread_id).toBe(missing);
    // Deleting the thread deletes its crons.
    await rt.client.threads.delete(missing);
    expect((await rt.http(`/runs/crons/${created.cron_id}`)).status).toBe(404);
  });

  it('interprets the schedule in the given time zone, UTC otherwise', async () => {
    const res = await rt.http('/runs/crons', {
      method: 'POST',
      json: { assistant_id: 'echo', schedule: '0 9 * * *', timezone: 'Asia/Kolkata' },
    });
    expect(res.status).toBe(200);
    const cron = (await res.json()) as Cron & { timezone: string };
    expect(cron.timezone).toBe('Asia/Kolkata');
    // 09:00 in India (UTC+05:30, no daylight saving) is 03:30 UTC.
    expect(cron.next_run_date).toMatch(/T03:30:00\.000Z$/);
    const utc = await rt.client.crons.create('echo', { schedule: '0 9 * * *' });
    expect(utc.next_run_date).toMatch(/T09:00:00\.000Z$/);
  });

  it("takes croniter's macros (@hourly, @daily, ...) as the official server does, and keeps them as written", async () => {
    const hourly = await rt.client.crons.create('echo', { schedule: '@hourly' });
    expect(hourly.schedule).toBe('@hourly');
    expect(hourly.next_run_date).toMatch(/T\d\d:00:00\.000Z$/);
    const daily = await rt.client.crons.create('echo', { schedule: '@daily' });
    expect(daily.next_run_date).toMatch(/T00:00:00\.000Z$/);
    const updated = await rt.http(`/runs/crons/${daily.cron_id}`, {
      method: 'PATCH',
      json: { schedule: '@reboot' },
    });
    expect(updated.status).toBe(422);
    expect(
      (await rt.client.crons.search({ assistantId: 'echo', limit: 1000 })).find(
        (c) => c.cron_id === daily.cron_id,
      )?.schedule,
    ).toBe('@daily');
  });
});

describe('cron search and count', () => {
  it('filters, sorts, pages and selects', async () => {
    const mine = await assistant('search-a');
    const other = await assistant('search-b');
    const thread = await rt.client.threads.create();
    // Daily at 1, 2 and 3 hours from now: their next runs are in that order at any time of day.
    const hoursFromNow = (n: number) => `0 ${(new Date().getUTCHours() + n) % 24} * * *`;
    const a1 = await rt.client.crons.create(mine.assistant_id, { schedule: hoursFromNow(3) });
    const a2 = await rt.client.crons.create(mine.assistant_id, {
      schedule: hoursFromNow(1),
      enabled: false,
    });
    const a3 = await rt.client.crons.createForThread(thread.thread_id, mine.assistant_id, {
      schedule: hoursFromNow(2),
    });
    await rt.http('/runs/crons', {
      method: 'POST',
      json: { assistant_id: other.assistant_id, schedule: YEARLY, metadata: { team: 'blue' } },
    });

    const ids = (crons: Partial<Cron>[]) => crons.map((c) => c.cron_id);
    const all = await rt.client.crons.search({ assistantId: mine.assistant_id });
    expect(ids(all)).toEqual([a3.cron_id, a2.cron_id, a1.cron_id]); // created_at desc
    const byNext = await rt.client.crons.search({
      assistantId: mine.assistant_id,
      sortBy: 'next_run_date',
      sortOrder: 'asc',
    });
    expect(ids(byNext)).toEqual([a2.cron_id, a3.cron_id, a1.cron_id]);
    expect(
      ids(await rt.client.crons.search({ assistantId: mine.assistant_id, enabled: false })),
    ).toEqual([a2.cron_id]);
    expect(ids(await rt.client.crons.search({ threadId: thread.thread_id }))).toEqual([a3.cron_id]);
    const page = await rt.client.crons.search({
      assistantId: mine.assistant_id,
      sortBy: 'created_at',
      sortOrder: 'asc',
      limit: 2,
      offset: 1,
    });
    expect(ids(page)).toEqual([a2.cron_id, a3.cron_id]);
    const selected = await rt.client.crons.search({
      assistantId: mine.assistant_id,
      select: ['cron_id', 'schedule'],
      limit: 1,
    });
    expect(selected).toEqual([{ cron_id: a3.cron_id, schedule: hoursFromNow(2) }]);

    expect(await rt.client.crons.count({ assistantId: mine.assistant_id })).toBe(3);
    expect(await rt.client.crons.count({ threadId: thread.thread_id })).toBe(1);

    // Metadata filters and pagination headers (the SDK sends neither through search).
    const res = await rt.http('/runs/crons/search', {
      method: 'POST',
      json: { metadata: { team: 'blue' } },
    });
    expect(((await res.json()) as Cron[]).map((c) => c.assistant_id)).toEqual([other.assistant_id]);
    const paged = await rt.http('/runs/crons/search', {
      method: 'POST',
      json: { assistant_id: mine.assistant_id, limit: 2 },
    });
    expect(paged.headers.get('x-pagination-total')).toBe('3');
    expect(paged.headers.get('x-pagination-next')).toBe('2');
    const counted = await rt.http('/runs/crons/count', {
      method: 'POST',
      json: { metadata: { team: 'blue' } },
    });
    expect(await counted.json()).toBe(1);
  });
});

describe('cron validation', () => {
  const post = (json: unknown, path = '/runs/crons') => rt.http(path, { method: 'POST', json });
  const detail = async (res: Response) => JSON.stringify(await res.json());

  it('refuses a bad schedule, time zone, end time or webhook with 422 naming the field', async () => {
    for (const schedule of ['not a cron', '61 * * * *', '* * *', '* * * * * * *']) {
      const res = await post({ assistant_id: 'echo', schedule });
      expect(res.status, schedule).toBe(422);
      expect(await detail(res)).toContain('schedule');
    }
    await expect(rt.client.crons.create('echo', { schedule: 'every day' })).rejects.toThrow(
      /HTTP 422/,
    );
    const tz = await post({ assistant_id: 'echo', schedule: YEARLY, timezone: 'Mars/Olympus' });
    expect(tz.status).toBe(422);
    expect(await detail(tz)).toContain('timezone');
    const end = await post({ assistant_id: 'echo', schedule: YEARLY, end_time: 'tomorrow' });
    expect(end.status).toBe(422);
    expect(await detail(end)).toContain('end_time');
    for (const webhook of [
      'not a url',
      'ftp://example.com/hook',
      '/relative/hook',
      // The webhooks context's rules: loopback and the cloud metadata address are refused.
      'http://127.0.0.1:8080/hook',
      'http://169.254.169.254/latest',
    ]) {
      const res = await post({ assistant_id: 'echo', schedule: YEARLY, webhook });
      expect(res.status, webhook).toBe(422);
      expect(await detail(res)).toContain('webhook');
    }
    const missing = await post({ assistant_id: 'echo' });
    expect(missing.status).toBe(422);
    const ok = await post({
      assistant_id: 'echo',
      schedule: YEARLY,
      webhook: 'https://example.com/hook?token=abc',
    });
    expect(ok.status).toBe(200);
  });

  it('answers 404 for unknown crons and assistants (named by id or not), 422 for bad ids, 400 for an empty update', async () => {
    const unknown = '00000000-0000-4000-8000-0000000000ff';
    expect((await rt.http(`/runs/crons/${unknown}`)).status).toBe(404);
    await expect(rt.client.crons.update(unknown, { enabled: false })).rejects.toThrow(/HTTP 404/);
    await expect(rt.client.crons.delete(unknown)).rejects.toThrow(/HTTP 404/);
    expect((await rt.http('/runs/crons/not-a-uuid')).status).toBe(422);
    await expect(rt.client.crons.create(unknown, { schedule: YEARLY })).rejects.toThrow(/HTTP 404/);
    expect((await post({ assistant_id: 'no-such-graph', schedule: YEARLY })).status).toBe(404);

    const cron = await rt.client.crons.create('echo', { schedule: YEARLY });
    const empty = await rt.http(`/runs/crons/${cron.cron_id}`, { method: 'PATCH', json: {} });
    expect(empty.status).toBe(400);
    expect(await empty.json()).toEqual({ detail: 'Request body cannot be empty' });
    await expect(rt.client.crons.update(cron.cron_id, { schedule: 'nope' })).rejects.toThrow(
      /HTTP 422/,
    );
  });
});

describe('crons firing', () => {
  it('creates one run per due time on its thread, with the payload and metadata', async () => {
    const thread = await rt.client.threads.create();
    const cron = await rt.client.crons.createForThread(thread.thread_id, 'echo', {
      schedule: EVERY_SECOND,
      input: hi('tick'),
      metadata: { source: 'cron-test' },
    });
    const runs = await eventually(
      () => rt.client.runs.list(thread.thread_id, { limit: 100 }),
      (r) => r.length >= 3,
    );
    await rt.client.crons.delete(cron.cron_id);
    expect(runs.length).toBeGreaterThanOrEqual(3);
    const times = runs.map(scheduledFor);
    expect(new Set(times).size).toBe(times.length);
    for (const time of times) expect(time).toMatch(/\.000Z$/); // whole seconds: due times
    expect(runs[0]).toMatchObject({
      assistant_id: cron.assistant_id,
      metadata: { source: 'cron-test' },
      kwargs: {
        input: hi('tick'),
        cron_id: cron.cron_id,
        config: { configurable: { cron_id: cron.cron_id } },
      },
    });
    const state = await eventually(
      () => rt.client.threads.getState<{ messages: { content: string }[] }>(thread.thread_id),
      (s) => s.values.messages.length >= 4,
    );
    expect(state.values.messages.slice(0, 2).map((m) => m.content)).toEqual(['tick', 'echo: tick']);
  });

  it('stops at end_time', async () => {
    const thread = await rt.client.threads.create();
    const endTime = new Date(Date.now() + 2500).toISOString();
    const res = await rt.http(`/threads/${thread.thread_id}/runs/crons`, {
      method: 'POST',
      json: { assistant_id: 'echo', schedule: EVERY_SECOND, input: hi('e'), end_time: endTime },
    });
    const cron = (await res.json()) as Cron;
    const done = await eventually(
      () => getCron(cron.cron_id),
      (c) => c.next_run_date === null,
    );
    expect(done.next_run_date).toBeNull();
    await sleep(1500);
    const runs = await rt.client.runs.list(thread.thread_id, { limit: 100 });
    expect(runs.length).toBeGreaterThanOrEqual(1);
    for (const run of runs)
      expect(new Date(scheduledFor(run)).getTime()).toBeLessThanOrEqual(Date.parse(endTime));

    // An end time already past: the cron never fires.
    const past = await rt.http('/runs/crons', {
      method: 'POST',
      json: { assistant_id: 'echo', schedule: EVERY_SECOND, end_time: '2020-01-01T00:00:00Z' },
    });
    expect(((await past.json()) as Cron).next_run_date).toBeNull();
  });

  it('does not fire while disabled, and fires again once enabled', async () => {
    const thread = await rt.client.threads.create();
    const cron = await rt.client.crons.createForThread(thread.thread_id, 'echo', {
      schedule: EVERY_SECOND,
      input: hi('d'),
      enabled: false,
    });
    await sleep(2500);
    expect(await rt.client.runs.list(thread.thread_id)).toEqual([]);
    const enabledAt = Date.now();
    await rt.client.crons.update(cron.cron_id, { enabled: true });
    const runs = await eventually(
      () => rt.client.runs.list(thread.thread_id),
      (r) => r.length >= 1,
    );
    await rt.client.crons.delete(cron.cron_id);
    expect(runs.length).toBeGreaterThanOrEqual(1);
    // Nothing is caught up for the time it was disabled.
    for (const run of runs)
      expect(new Date(scheduledFor(run)).getTime()).toBeGreaterThan(enabledAt - 1000);
  });

  it('skips the firings a reject cron meets while its thread is busy, then resumes', async () => {
    const thread = await rt.client.threads.create();
    const slow = await rt.client.runs.create(thread.thread_id, 'slow', { input: hi('busy') });
    const cron = await rt.client.crons.createForThread(thread.thread_id, 'echo', {
      schedule: EVERY_SECOND,
      input: hi('r'),
      multitaskStrategy: 'reject',
    });
    await eventually(
      () => rt.client.runs.get(thread.thread_id, slow.run_id),
      (r) => r.status === 'success',
    );
    const freedAt = Date.now();
    const runs = await eventually(
      () => rt.client.runs.list(thread.thread_id, { limit: 100 }),
      (r) => r.length >= 2,
    );
    await rt.client.crons.delete(cron.cron_id);
    const fromCron = runs.filter((r) => r.run_id !== slow.run_id);
    expect(fromCron.length).toBeGreaterThanOrEqual(1);
    // The slow run took about 3 s: the firings due meanwhile were refused, not queued.
    const earliest = Math.min(...fromCron.map((r) => Date.parse(scheduledFor(r))));
    expect(earliest).toBeGreaterThan(freedAt - 1500);
  });

  it('gives each firing of a stateless cron a new thread, deleted afterwards unless kept', async () => {
    const kept = await assistant('stateless-keep');
    const dropped = await assistant('stateless-delete');
    const keep = await rt.client.crons.create(kept.assistant_id, {
      schedule: EVERY_SECOND,
      input: hi('k'),
      onRunCompleted: 'keep',
    });
    const drop = await rt.client.crons.create(dropped.assistant_id, {
      schedule: EVERY_SECOND,
      input: hi('d'),
    });
    const threadsOf = (assistantId: string) =>
      rt.client.threads.search({ metadata: { assistant_id: assistantId }, limit: 100 });
    const keptThreads = await eventually(
      () => threadsOf(kept.assistant_id),
      (t) => t.length >= 2 && t.every((x) => x.status === 'idle'),
    );
    // The dropping cron fired as often: its schedule moved on past several due times.
    const dropped2 = await eventually(
      () => getCron(drop.cron_id),
      (c) => Date.parse(c.next_run_date!) >= Date.parse(drop.next_run_date) + 2000,
    );
    expect(Date.parse(dropped2.next_run_date!)).toBeGreaterThanOrEqual(
      Date.parse(drop.next_run_date) + 2000,
    );
    await rt.client.crons.delete(keep.cron_id);
    await rt.client.crons.delete(drop.cron_id);
    expect(keptThreads.length).toBeGreaterThanOrEqual(2);
    const [first] = keptThreads;
    const state = await rt.client.threads.getState<{ messages: { content: string }[] }>(
      first!.thread_id,
    );
    expect(state.values.messages.map((m) => m.content)).toEqual(['k', 'echo: k']);
    const leftover = await eventually(
      () => threadsOf(dropped.assistant_id),
      (t) => t.length === 0,
    );
    expect(leftover).toEqual([]);
  });
});
