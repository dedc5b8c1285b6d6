// Which database errors are worth trying again, and how long they are tried.
import { describe, expect, it } from 'vitest';
import { describeDatabase, isUnavailable, retryWhileUnavailable } from '../../common/db/index.js';

const coded = (code: string) => Object.assign(new Error(code), { code });

describe('isUnavailable', () => {
  it('names a server going away, a refused connection and a broken one', () => {
    for (const err of [
      coded('57P01'),
      coded('57P03'),
      coded('08006'),
      coded('ECONNREFUSED'),
      new Error('Connection terminated unexpectedly'),
    ])
      expect(isUnavailable(err), String(err)).toBe(true);
  });

  it('does not name a statement that failed on its own merits', () => {
    for (const err of [coded('23505'), coded('42P01'), coded('P0001'), new Error('boom'), 'x'])
      expect(isUnavailable(err), String(err)).toBe(false);
  });
});

describe('retryWhileUnavailable', () => {
  it('tries again while the database is away, and returns what the first success returns', async () => {
    let calls = 0;
    const value = await retryWhileUnavailable(
      () => (++calls < 3 ? Promise.reject(coded('ECONNREFUSED')) : Promise.resolve('ok')),
      { withinMs: 5000 },
    );
    expect({ value, calls }).toEqual({ value: 'ok', calls: 3 });
  });

  it('rethrows any other error at once, and the last one once its time is up', async () => {
    let calls = 0;
    const other = () => {
      calls++;
      return Promise.reject(coded('23505'));
    };
    await expect(retryWhileUnavailable(other, { withinMs: 5000 })).rejects.toThrow('23505');
    expect(calls).toBe(1);
    const started = Date.now();
    const away = () => Promise.reject(coded('57P01'));
    await expect(retryWhileUnavailable(away, { withinMs: 300 })).rejects.toThrow('57P01');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('stops waiting when its signal aborts', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    await expect(
      retryWhileUnavailable(() => Promise.reject(coded('ECONNRESET')), {
        withinMs: 60_000,
        signal: controller.signal,
      }),
    ).rejects.toThrow('ECONNRESET');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('also waits out what `retryAlso` names, and nothing else', async () => {
    let calls = 0;
    const value = await retryWhileUnavailable(
      () => (++calls < 3 ? Promise.reject(coded('ENOTFOUND')) : Promise.resolve('ok')),
      { withinMs: 5000, retryAlso: (err) => (err as { code?: string }).code === 'ENOTFOUND' },
    );
    expect([value, calls]).toEqual(['ok', 3]);
    calls = 0;
    const refused = () => (calls++, Promise.reject(coded('ENOTFOUND')));
    await expect(retryWhileUnavailable(refused, { withinMs: 5000 })).rejects.toThrow('ENOTFOUND');
    expect(calls).toBe(1);
  });
});

describe('describeDatabase', () => {
  it('names user, host, port and database, never the password', () => {
    expect(describeDatabase('postgres://app:pw@db.internal:6432/agents?sslmode=require')).toBe(
      'app@db.internal:6432/agents',
    );
    expect(describeDatabase('postgresql://db/agents')).toBe('db/agents');
    expect(describeDatabase('postgres://u%40x:p@/agents?host=/run/postgresql')).toBe(
      'u@x@/run/postgresql/agents',
    );
  });

  it('says when there is nothing to name', () => {
    expect(describeDatabase(undefined)).toBe('the configured database');
    expect(describeDatabase('host=db user=app password=pw')).toBe(
      'the configured database (DATABASE_URL is not a URL)',
    );
  });
});
