// Cron expressions: validation and the next due time, read as the official server's parser
// (croniter) reads them: five fields (minute precision), six with seconds LAST, or one of its
// macros; evaluated in UTC unless the cron names an IANA time zone. cron-parser evaluates them,
// and it wants seconds first, so a six-field expression is reordered for it.
import { createRequire } from 'node:module';
import type { CronExpressionParser } from 'cron-parser';
import { invalid } from '../../common/errors/index.js';

// cron-parser (CommonJS, with luxon about 5 MiB resident) is required the first time a schedule is
// evaluated: a runtime with no crons never loads it.
const require = createRequire(import.meta.url);
let parser: typeof CronExpressionParser | undefined;
const cronParser = () =>
  (parser ??= (require('cron-parser') as { CronExpressionParser: typeof CronExpressionParser })
    .CronExpressionParser);

export interface Schedule {
  schedule: string;
  timezone: string | null;
}

export function assertTimezone(timezone: string, loc: (string | number)[]): void {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    throw invalid(loc, `Invalid timezone: "${timezone}" is not an IANA time zone name`);
  }
}

/** croniter's macros, as the five fields they stand for; a cron keeps the macro as written. */
const MACROS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

/** The schedule's fields as croniter reads them: its macros expanded. */
const fieldsOf = (schedule: string) =>
  (MACROS[schedule.trim().toLowerCase()] ?? schedule).trim().split(/\s+/);

/** croniter's `minute hour day month weekday [second]` as cron-parser's `[second] minute ...`. */
function forParser(schedule: string): string {
  const fields = fieldsOf(schedule);
  return (fields.length === 6 ? [fields[5], ...fields.slice(0, 5)] : fields).join(' ');
}

function parse(schedule: Schedule, after: Date) {
  return cronParser().parse(forParser(schedule.schedule), {
    currentDate: after,
    tz: schedule.timezone ?? 'UTC',
  });
}

/** Throws a 422 naming the field when the expression cannot produce due times. */
export function assertSchedule(schedule: Schedule, loc: (string | number)[]): void {
  const fields = fieldsOf(schedule.schedule).length;
  if (fields === 7)
    throw invalid(
      loc,
      `Invalid cron schedule "${schedule.schedule}": a seventh field (the year) is not supported`,
    );
  if (fields < 5 || fields > 6)
    throw invalid(
      loc,
      `Invalid cron schedule "${schedule.schedule}": expected 5 fields (minute hour day month weekday), 6 (the sixth being seconds) or one of ${Object.keys(MACROS).join(', ')}`,
    );
  try {
    parse(schedule, new Date()).next();
  } catch (err) {
    throw invalid(loc, `Invalid cron schedule "${schedule.schedule}": ${(err as Error).message}`);
  }
}

/** The first due time strictly after `after`, or null when it would fall after `endTime`. */
export function nextRunDate(schedule: Schedule, after: Date, endTime: Date | null): Date | null {
  const next = parse(schedule, after).next().toDate();
  return endTime && next > endTime ? null : next;
}
