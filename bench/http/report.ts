// Turns the measurements of both servers into markdown tables and a JSON file.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Measurement, OpId, ServerRun } from './scenario.js';

interface Row {
  op: OpId;
  label: string;
  /** Ratio of graphdock to baseline ops/s that the target asks for. */
  target: number;
  /** Which measurement of the op: the first (fewest threads) or the last. */
  which: 'first' | 'last';
}

function rows(threads: number): Row[] {
  const n = threads.toLocaleString('en-US');
  return [
    { op: 'threads.create', label: 'thread create', target: 1.5, which: 'last' },
    { op: 'threads.get', label: 'thread get', target: 2, which: 'last' },
    { op: 'threads.state', label: 'thread state', target: 2, which: 'last' },
    {
      op: 'threads.search.metadata',
      label: `thread search, metadata (10 of ${n})`,
      target: 2,
      which: 'last',
    },
    {
      op: 'threads.search.newest',
      label: `thread search, newest 10 of ${n}`,
      target: 2,
      which: 'last',
    },
    { op: 'assistants.search', label: 'assistant search (limit 10)', target: 2, which: 'last' },
  ];
}

function find(run: ServerRun | undefined, op: OpId, which: 'first' | 'last') {
  const found = run?.measurements.filter((m) => m.op === op) ?? [];
  return which === 'first' ? found[0] : found.at(-1);
}

const ops = (m: Measurement | undefined) => (m ? m.result.opsPerSec.toFixed(0) : '–');
const ms = (value: number | undefined) => (value === undefined ? '–' : value.toFixed(2));
const errs = (m: Measurement | undefined) => (m ? String(m.result.errors) : '–');

export function markdownReport(runs: ServerRun[], threads: number): string {
  const baseline = runs.find((r) => r.server === 'baseline');
  const graphdock = runs.find((r) => r.server === 'graphdock');
  const lines = [
    '| operation | baseline ops/s | p50 ms | p99 ms | graphdock ops/s | p50 ms | p99 ms | ratio of medians | ratio to baseline best | target (judged on best) | errors (b/g) |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|',
  ];
  for (const row of rows(threads)) {
    const b = find(baseline, row.op, row.which);
    const g = find(graphdock, row.op, row.which);
    const ratio =
      b && g && b.result.opsPerSec > 0 ? g.result.opsPerSec / b.result.opsPerSec : undefined;
    // The conservative comparison: our median window against the baseline's best one, so a
    // stall of the baseline in some window never counts in our favour.
    const best = b ? Math.max(b.result.opsPerSec, ...(b.result.windows ?? [])) : 0;
    const conservative = g && best > 0 ? g.result.opsPerSec / best : undefined;
    const verdict =
      conservative === undefined ? '' : conservative >= row.target ? ' met' : ' missed';
    lines.push(
      `| ${row.label} | ${ops(b)} | ${ms(b?.result.p50Ms)} | ${ms(b?.result.p99Ms)} | ` +
        `${ops(g)} | ${ms(g?.result.p50Ms)} | ${ms(g?.result.p99Ms)} | ` +
        `${ratio === undefined ? '–' : `${ratio.toFixed(2)}x`} | ` +
        `${conservative === undefined ? '–' : `${conservative.toFixed(2)}x`} | ≥${row.target}x${verdict} | ` +
        `${errs(b)} / ${errs(g)} |`,
    );
  }

  lines.push('', 'Thread search latency against the number of threads in the server:', '');
  lines.push(
    '| server | search | threads | ops/s | p50 ms | p99 ms |',
    '|---|---|---:|---:|---:|---:|',
  );
  for (const run of [graphdock, baseline]) {
    if (!run) continue;
    for (const op of ['threads.search.metadata', 'threads.search.newest'] as const) {
      for (const m of run.measurements.filter((x) => x.op === op)) {
        lines.push(
          `| ${run.server} | ${op === 'threads.search.metadata' ? 'metadata, 10 results' : 'newest 10'} | ` +
            `${m.threadCount.toLocaleString('en-US')} | ${ops(m)} | ${ms(m.result.p50Ms)} | ${ms(m.result.p99Ms)} |`,
        );
      }
    }
  }

  lines.push('', 'Seeding (POST /threads, high concurrency):', '');
  lines.push('| server | what | count | seconds | threads/s |', '|---|---|---:|---:|---:|');
  for (const run of runs) {
    for (const s of run.seeding) {
      lines.push(
        `| ${run.server} | ${s.what} | ${s.count} | ${s.seconds.toFixed(1)} | ${s.perSec.toFixed(0)} |`,
      );
    }
  }

  const failures = runs.flatMap((run) =>
    run.measurements
      .filter((m) => m.result.errors > 0)
      .map(
        (m) => `- ${run.server} ${m.op}: ${m.result.errors} errors, first: ${m.result.firstError}`,
      ),
  );
  if (failures.length > 0) lines.push('', '**Requests failed:**', '', ...failures);
  return lines.join('\n');
}

export function writeJsonReport(dir: string, report: unknown): string {
  mkdirSync(dir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const file = join(dir, `http-${stamp}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}
