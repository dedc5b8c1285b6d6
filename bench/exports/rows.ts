// Realistic exported runs for the export benchmarks: traces of a chain root, an llm run and a
// tool run (about 2 KB each as JSON), with varied text so compression is not flattered.
import { randomUUID } from 'node:crypto';
import type { ExportRow } from '../../exports/parquet.js';

const WORDS =
  'agent graph node state message tool call retrieve answer question user system weather paris city forecast document chunk score summary plan step result error retry token stream checkpoint thread run'.split(
    ' ',
  );

let seed = 42;
const rand = () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed / 0x7fffffff;
};
const pick = <T>(list: readonly T[]) => list[Math.floor(rand() * list.length)]!;
const sentence = (n: number) => Array.from({ length: n }, () => pick(WORDS)).join(' ');

const stamp = (micros: bigint) => {
  const d = new Date(Number(micros / 1000n));
  const iso = d.toISOString().replace(/[-:]/g, '').replace('.', '');
  return `${iso.slice(0, 15)}${String(micros % 1_000_000n).padStart(6, '0')}Z`;
};

/** The `i`-th run of a day starting at `dayStartMicros`, one trace per three runs. */
export function makeRow(
  i: number,
  tenantId: string,
  sessionId: string,
  dayStartMicros: bigint,
  trace: { id: string; dotted: string },
): ExportRow {
  const start = dayStartMicros + BigInt(i) * 50_000n;
  const id = randomUUID();
  const kind = i % 3;
  const root = kind === 0;
  if (root) {
    trace.id = id;
    trace.dotted = `${stamp(start)}${id}`;
  }
  const dotted = root ? trace.dotted : `${trace.dotted}.${stamp(start)}${id}`;
  const question = sentence(30);
  const answer = sentence(45);
  const llm = kind === 1;
  const inputs = llm
    ? {
        messages: [
          { role: 'system', content: sentence(20) },
          { role: 'user', content: question },
        ],
      }
    : { question, context: sentence(25) };
  const outputs = llm
    ? {
        generations: [{ text: answer, message: { role: 'assistant', content: answer } }],
        usage_metadata: { input_tokens: 120 + (i % 50), output_tokens: 80 + (i % 40) },
      }
    : { answer };
  const extra = {
    metadata: {
      thread_id: `thread-${Math.floor(i / 30)}`,
      ls_provider: 'openai',
      ls_model_name: 'gpt-4o-mini',
      langgraph_node: pick(WORDS),
      langgraph_step: i % 7,
    },
    runtime: { sdk: 'langsmith-js', sdk_version: '0.3.0', platform: 'linux', runtime: 'node' },
  };
  const events = [
    { name: 'start', time: new Date(Number(start / 1000n)).toISOString() },
    { name: 'end', time: new Date(Number(start / 1000n) + 40).toISOString() },
  ];
  return {
    id,
    tenant_id: tenantId,
    session_id: sessionId,
    trace_id: trace.id,
    parent_run_id: root ? null : trace.id,
    parent_run_ids: root ? [] : [trace.id],
    reference_example_id: null,
    name: llm ? 'ChatOpenAI' : kind === 2 ? 'get_weather' : 'agent',
    run_type: llm ? 'llm' : kind === 2 ? 'tool' : 'chain',
    start_time: String(start),
    end_time: String(start + 40_000n),
    status: i % 50 === 0 ? 'error' : 'success',
    is_root: root,
    dotted_order: dotted,
    trace_tier: null,
    inputs: JSON.stringify(inputs),
    outputs: JSON.stringify(outputs),
    error: i % 50 === 0 ? `Error: ${sentence(8)}` : null,
    extra: JSON.stringify(extra),
    events: JSON.stringify(events),
    tags: ['bench', pick(WORDS)],
    feedback_stats: null,
    total_tokens: llm ? String(200 + (i % 90)) : null,
    prompt_tokens: llm ? String(120 + (i % 50)) : null,
    completion_tokens: llm ? String(80 + (i % 40)) : null,
    total_cost: llm ? 0.0002 * (i % 9) : null,
    prompt_cost: llm ? 0.0001 * (i % 9) : null,
    completion_cost: llm ? 0.0001 * (i % 9) : null,
    first_token_time: llm ? String(start + 5_000n) : null,
  };
}

/** Rows in batches of `batch`, generated lazily so memory holds one batch. */
export function* rowBatches(
  total: number,
  batch: number,
  tenantId = randomUUID(),
  sessionId = randomUUID(),
  dayStartMicros = BigInt(Date.parse('2026-11-01T00:00:00Z')) * 1000n,
): Generator<ExportRow[]> {
  const trace = { id: '', dotted: '' };
  for (let done = 0; done < total;) {
    const n = Math.min(batch, total - done);
    const rows = new Array<ExportRow>(n);
    for (let j = 0; j < n; j++)
      rows[j] = makeRow(done + j, tenantId, sessionId, dayStartMicros, trace);
    done += n;
    yield rows;
  }
}
