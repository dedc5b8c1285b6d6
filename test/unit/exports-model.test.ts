import { describe, expect, it } from 'vitest';
import { dayWindows, dueWindows, fileName, runFolder } from '../../exports/index.js';
import { decodeCursor, encodeCursor } from '../../exports/model.js';
import { duckdbLimits } from '../../exports/parquet.js';

const d = (s: string) => new Date(s);

describe('bulk export model', () => {
  it('splits [start, end) into one window per UTC day it touches', () => {
    const w = dayWindows(d('2026-11-01T18:00:00Z'), d('2026-11-03T06:00:00Z'));
    expect(w.map((x) => [x.start.toISOString(), x.end.toISOString()])).toEqual([
      ['2026-11-01T18:00:00.000Z', '2026-11-02T00:00:00.000Z'],
      ['2026-11-02T00:00:00.000Z', '2026-11-03T00:00:00.000Z'],
      ['2026-11-03T00:00:00.000Z', '2026-11-03T06:00:00.000Z'],
    ]);
    expect(dayWindows(d('2026-11-01T00:00:00Z'), d('2026-11-02T00:00:00Z'))).toHaveLength(1);
  });

  it('spawns a scheduled window only after its end plus the grace period', () => {
    const start = d('2026-11-01T00:00:00Z');
    const grace = 10 * 60_000;
    expect(dueWindows(start, 6, grace, d('2026-11-01T06:09:59Z'))).toEqual([]);
    const due = dueWindows(start, 6, grace, d('2026-11-01T12:10:00Z'));
    expect(due.map((w) => w.start.toISOString())).toEqual([
      '2026-11-01T00:00:00.000Z',
      '2026-11-01T06:00:00.000Z',
    ]);
    expect(due[1]!.end.toISOString()).toBe('2026-11-01T12:00:00.000Z');
  });

  it('lays files out Hive-style with zero-padded month and day, names fixed by position', () => {
    const folder = runFolder(
      '/exports/',
      { exportId: 'e', tenantId: 't', sessionId: 's' },
      d('2026-03-05T00:00:00Z'),
    );
    expect(folder).toBe(
      'exports/export_id=e/tenant_id=t/session_id=s/runs/year=2026/month=03/day=05',
    );
    expect(fileName('r', 3)).toBe('r-00003.parquet');
    expect(fileName('r', 3)).toBe(fileName('r', 3));
  });

  it('round-trips keyset cursors', () => {
    const c = { startMicros: '1793491200000001', id: '0b0f5a5e-0000-4000-8000-000000000001' };
    expect(decodeCursor(encodeCursor(c))).toEqual(c);
    expect(decodeCursor(null)).toBeUndefined();
  });
});

describe("DuckDB's limits for one export file", () => {
  const MiB = 1024 * 1024;
  it('keeps 4 MiB CSV buffers and 128 MiB for ordinary rows and row groups', () => {
    expect(duckdbLimits(2_000, 10_000 * 1_700)).toEqual({
      maxLineSize: 2 * MiB,
      bufferSize: 4 * MiB,
      memoryLimit: 128 * MiB,
    });
  });

  it('grows the line limit and buffers with the longest row', () => {
    const limits = duckdbLimits(5 * MiB, 0);
    expect(limits.maxLineSize).toBe(5 * MiB + 1024);
    expect(limits.bufferSize).toBe(2 * (5 * MiB + 1024));
    expect(limits.memoryLimit).toBe(16 * limits.bufferSize);
  });

  it('gives a large row group three times its size, so the encode does not spill', () => {
    expect(duckdbLimits(2_000, 50_000 * 1_600).memoryLimit).toBe(3 * 50_000 * 1_600);
  });
});
