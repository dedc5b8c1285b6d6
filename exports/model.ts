// Bulk export rules that need no I/O: statuses, day partitions, scheduled windows, object keys
// and cursors.

/** Export statuses as they go on the wire (LangSmith's PascalCase values). */
export const EXPORT_STATUSES = [
  'Created',
  'Running',
  'Completed',
  'Failed',
  'Cancelled',
  'TimedOut',
  'IntervalScheduled',
] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];
export type RunStatus = Exclude<ExportStatus, 'IntervalScheduled'>;

/** Statuses after which nothing changes. */
export const FINAL: ReadonlySet<string> = new Set(['Completed', 'Failed', 'Cancelled', 'TimedOut']);

const DAY_MS = 86_400_000;

/** `[start, end)` cut at UTC midnights: one window per day partition it touches. */
export function dayWindows(start: Date, end: Date): { start: Date; end: Date }[] {
  const windows: { start: Date; end: Date }[] = [];
  let from = start.getTime();
  while (from < end.getTime()) {
    const midnight = Math.floor(from / DAY_MS) * DAY_MS + DAY_MS;
    const to = Math.min(midnight, end.getTime());
    windows.push({ start: new Date(from), end: new Date(to) });
    from = to;
  }
  return windows;
}

/**
 * The windows of a scheduled export that are due at `now`: each `[w, w + interval)` is spawned
 * once `now` is past its end plus `graceMs` (late runs still arrive until then).
 */
export function dueWindows(
  next: Date,
  intervalHours: number,
  graceMs: number,
  now: Date,
): { start: Date; end: Date }[] {
  const step = intervalHours * 3_600_000;
  const due: { start: Date; end: Date }[] = [];
  for (let w = next.getTime(); w + step + graceMs <= now.getTime(); w += step)
    due.push({ start: new Date(w), end: new Date(w + step) });
  return due;
}

const pad = (n: number) => String(n).padStart(2, '0');

/**
 * The Hive-style folder of one run's files: `export_id=/tenant_id=/session_id=/runs/year=/
 * month=/day=` (month and day zero-padded), under the destination's prefix.
 */
export function runFolder(
  prefix: string,
  ids: { exportId: string; tenantId: string; sessionId: string },
  day: Date,
): string {
  const root = prefix.replace(/^\/+|\/+$/g, '');
  const parts = [
    `export_id=${ids.exportId}`,
    `tenant_id=${ids.tenantId}`,
    `session_id=${ids.sessionId}`,
    'runs',
    `year=${day.getUTCFullYear()}`,
    `month=${pad(day.getUTCMonth() + 1)}`,
    `day=${pad(day.getUTCDate())}`,
  ];
  return root ? `${root}/${parts.join('/')}` : parts.join('/');
}

/**
 * The name of a run's `seq`-th file. It depends only on the run and the file's position, so a
 * retry that writes the rows after the same committed cursor overwrites the same object.
 */
export function fileName(runId: string, seq: number): string {
  return `${runId}-${String(seq).padStart(5, '0')}.parquet`;
}

/** The keyset position of a row: its start time in epoch microseconds and its id. */
export interface Cursor {
  startMicros: string;
  id: string;
}

export const encodeCursor = (c: Cursor) => `${c.startMicros}/${c.id}`;

export function decodeCursor(text: string | null): Cursor | undefined {
  if (!text) return undefined;
  const [startMicros, id] = text.split('/');
  return startMicros && id ? { startMicros, id } : undefined;
}
