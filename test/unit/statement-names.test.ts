import { describe, expect, it } from 'vitest';
import { StatementNames } from '../../common/db/index.js';

describe('StatementNames', () => {
  it('names a text once it has run `threshold` times, and keeps that name', () => {
    const names = new StatementNames({ threshold: 3 });
    const text = 'SELECT thread_id FROM threads WHERE thread_id = $1';
    expect(names.nameFor(text)).toBeUndefined();
    expect(names.nameFor(text)).toBeUndefined();
    const name = names.nameFor(text);
    expect(name).toMatch(/^graphdock_\d+$/);
    expect(names.nameFor(text)).toBe(name);
    expect(names.nameFor('SELECT 2 WHERE $1::int > 0')).toBeUndefined();
  });

  it('gives different texts different names', () => {
    const names = new StatementNames({ threshold: 1 });
    const a = names.nameFor('SELECT $1::int');
    const b = names.nameFor('SELECT $1::text');
    expect(a).toBeDefined();
    expect(b).toBeDefined();
    expect(a).not.toBe(b);
  });

  it('never prepares a select of *, whose result type a migration may change', () => {
    const names = new StatementNames({ threshold: 1 });
    expect(names.nameFor('SELECT * FROM assistants WHERE assistant_id = $1')).toBeUndefined();
    expect(names.nameFor('SELECT t.* FROM threads t WHERE thread_id = $1')).toBeUndefined();
    expect(names.nameFor('UPDATE runs SET status = $1 RETURNING *')).toBeUndefined();
    expect(names.nameFor('SELECT count(*) FROM threads WHERE status = $1')).toBeDefined();
  });

  it('stops preparing at maxStatements or maxPreparedChars, and stops counting at maxTracked', () => {
    const names = new StatementNames({ threshold: 1, maxStatements: 2 });
    expect(names.nameFor('SELECT $1::int AS a')).toBeDefined();
    expect(names.nameFor('SELECT $1::int AS b')).toBeDefined();
    expect(names.nameFor('SELECT $1::int AS c')).toBeUndefined();
    expect(names.prepared).toBe(2);

    const sized = new StatementNames({ threshold: 1, maxPreparedChars: 70 });
    const long = `SELECT $1::int AS ${'x'.repeat(30)}`;
    expect(sized.nameFor(long)).toBeDefined();
    expect(sized.nameFor(`${long}y`)).toBeUndefined();
    expect(sized.nameFor('SELECT $1::int AS z')).toBeDefined();
    expect(sized.prepared).toBe(2);

    const tracked = new StatementNames({ threshold: 2, maxTracked: 1 });
    tracked.nameFor('SELECT $1::int AS first');
    tracked.nameFor('SELECT $1::int AS second');
    expect(tracked.nameFor('SELECT $1::int AS second')).toBeUndefined();
    expect(tracked.nameFor('SELECT $1::int AS first')).toBeDefined();
  });
});
