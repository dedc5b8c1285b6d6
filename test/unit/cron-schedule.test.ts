import { describe, expect, it } from 'vitest';
import { assertSchedule, assertTimezone, nextRunDate } from '../../runtime/crons/schedule.js';

const at = (iso: string) => new Date(iso);

describe('nextRunDate', () => {
  it('finds the next due time strictly after the given instant, in UTC by default', () => {
    const daily = { schedule: '30 6 * * *', timezone: null };
    expect(nextRunDate(daily, at('2026-03-01T06:29:59Z'), null)).toEqual(
      at('2026-03-01T06:30:00Z'),
    );
    expect(nextRunDate(daily, at('2026-03-01T06:30:00Z'), null)).toEqual(
      at('2026-03-02T06:30:00Z'),
    );
  });

  // The due times croniter 7.0.0 (the official server's parser) gives for the same expressions
  // from the same instant: a sixth field is the second, last.
  it('reads six fields as croniter does, seconds last', () => {
    const from = at('2026-11-28T03:40:00Z');
    const twoAfter = (schedule: string) => {
      const first = nextRunDate({ schedule, timezone: null }, from, null)!;
      return [first, nextRunDate({ schedule, timezone: null }, first, null)];
    };
    expect(twoAfter('0 */5 * * * *')).toEqual([
      at('2026-11-28T05:00:00Z'),
      at('2026-11-28T05:00:01Z'),
    ]);
    expect(twoAfter('30 * * * * 15')).toEqual([
      at('2026-11-28T04:30:15Z'),
      at('2026-11-28T05:30:15Z'),
    ]);
    expect(twoAfter('*/10 * * * * *')).toEqual([
      at('2026-11-28T03:40:01Z'),
      at('2026-11-28T03:40:02Z'),
    ]);
  });

  it('follows the time zone across a daylight-saving change', () => {
    const nineInNewYork = { schedule: '0 9 * * *', timezone: 'America/New_York' };
    // Before the 2026-03-08 change New York is UTC-5, after it UTC-4.
    expect(nextRunDate(nineInNewYork, at('2026-03-07T12:00:00Z'), null)).toEqual(
      at('2026-03-07T14:00:00Z'),
    );
    expect(nextRunDate(nineInNewYork, at('2026-03-08T12:00:00Z'), null)).toEqual(
      at('2026-03-08T13:00:00Z'),
    );
  });

  it('returns null when the next due time falls after the end time', () => {
    const hourly = { schedule: '0 * * * *', timezone: null };
    expect(nextRunDate(hourly, at('2026-03-01T10:10:00Z'), at('2026-03-01T10:59:59Z'))).toBeNull();
    expect(nextRunDate(hourly, at('2026-03-01T10:10:00Z'), at('2026-03-01T11:00:00Z'))).toEqual(
      at('2026-03-01T11:00:00Z'),
    );
  });
});

describe('schedule validation', () => {
  it('accepts five and six fields and refuses the rest with a 422 naming the field', () => {
    expect(() =>
      assertSchedule({ schedule: '*/5 * * * *', timezone: null }, ['body', 'schedule']),
    ).not.toThrow();
    expect(() =>
      assertSchedule({ schedule: '0 */5 * * * *', timezone: null }, ['body', 'schedule']),
    ).not.toThrow();
    for (const bad of [
      '* * * *',
      '* * * * * * *',
      '0 9 * * * 30 2027',
      '99 * * * *',
      'hourly',
      '* * 31 2 *',
      '@reboot',
      '@minutely',
    ]) {
      try {
        assertSchedule({ schedule: bad, timezone: null }, ['body', 'schedule']);
        throw new Error(`accepted ${bad}`);
      } catch (err) {
        expect((err as { status?: number }).status, bad).toBe(422);
        expect((err as { detail: { loc: string[] }[] }).detail[0]?.loc).toEqual([
          'body',
          'schedule',
        ]);
      }
    }
  });

  it("accepts croniter's macros, as the official server does, and keeps their meaning", () => {
    const from = at('2026-11-28T03:40:00Z');
    const next = (schedule: string) => nextRunDate({ schedule, timezone: null }, from, null);
    for (const macro of [
      '@yearly',
      '@annually',
      '@monthly',
      '@weekly',
      '@daily',
      '@midnight',
      '@hourly',
      '@Hourly',
    ])
      expect(() =>
        assertSchedule({ schedule: macro, timezone: null }, ['body', 'schedule']),
      ).not.toThrow();
    expect(next('@yearly')).toEqual(at('2027-01-01T00:00:00Z'));
    expect(next('@annually')).toEqual(at('2027-01-01T00:00:00Z'));
    expect(next('@monthly')).toEqual(at('2026-12-01T00:00:00Z'));
    expect(next('@weekly')).toEqual(at('2026-11-29T00:00:00Z')); // a Sunday
    expect(next('@daily')).toEqual(at('2026-11-29T00:00:00Z'));
    expect(next('@midnight')).toEqual(at('2026-11-29T00:00:00Z'));
    expect(next('@hourly')).toEqual(at('2026-11-28T04:00:00Z'));
    // In the cron's zone, as any schedule.
    expect(nextRunDate({ schedule: '@daily', timezone: 'Asia/Tokyo' }, from, null)).toEqual(
      at('2026-11-28T15:00:00Z'),
    );
  });

  it('accepts IANA zones only', () => {
    expect(() => assertTimezone('Europe/Paris', ['body', 'timezone'])).not.toThrow();
    expect(() => assertTimezone('Mars/Olympus', ['body', 'timezone'])).toThrow(/Invalid timezone/);
  });
});
