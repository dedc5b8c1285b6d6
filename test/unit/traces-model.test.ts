// Pure logic of the trace store and the runtime's tracing: where traces go, what is derived
// from a run a client sent without trace_id or dotted_order, the multipart body and filters.
import { describe, expect, it } from 'vitest';
import { SqlParams } from '../../common/db/index.js';
import { isFeedbackTokenUse, resolveTracingTarget } from '../../traces/index.js';
import { isOpenTraceRoute } from '../../runtime/http/auth.js';
import { compileFilter } from '../../traces/filter.js';
import { dottedStamp, toRecord, usageOfOutputs } from '../../traces/model.js';
import { parseMultipartRuns } from '../../traces/multipart.js';

const dev = { endpoint: 'http://127.0.0.1:2024/api/v1', project: 'default' };

describe('resolveTracingTarget', () => {
  it('is off with LANGSMITH_TRACING=false, whatever else is set', () => {
    expect(resolveTracingTarget({ LANGSMITH_TRACING: 'false' }, dev)).toBeUndefined();
    expect(
      resolveTracingTarget(
        { LANGCHAIN_TRACING_V2: 'false', GRAPHDOCK_TRACES_ENDPOINT: 'http://cp/api/v1' },
        dev,
      ),
    ).toBeUndefined();
  });

  it("honours the user's own LangSmith endpoint and key before Graphdock's", () => {
    expect(
      resolveTracingTarget(
        {
          LANGSMITH_ENDPOINT: 'https://eu.smith.example/api/v1',
          LANGSMITH_API_KEY: 'lsv2',
          GRAPHDOCK_TRACES_ENDPOINT: 'http://cp/api/v1',
        },
        dev,
      ),
    ).toMatchObject({
      endpoint: 'https://eu.smith.example/api/v1',
      apiKey: 'lsv2',
      source: 'user',
    });
    expect(
      resolveTracingTarget({ LANGSMITH_TRACING: 'true', LANGSMITH_API_KEY: 'lsv2' }, dev),
    ).toMatchObject({ endpoint: 'https://api.smith.langchain.com', source: 'user' });
  });

  it('uses the platform endpoint, else the dev store; the project is the deployment name unless overridden', () => {
    expect(
      resolveTracingTarget(
        {
          GRAPHDOCK_TRACES_ENDPOINT: 'http://cp/api/v1',
          GRAPHDOCK_TRACES_API_KEY: 'gdk',
          GRAPHDOCK_DEPLOYMENT_NAME: 'shop',
        },
        dev,
      ),
    ).toEqual({
      endpoint: 'http://cp/api/v1',
      apiKey: 'gdk',
      project: 'shop',
      source: 'graphdock',
    });
    expect(resolveTracingTarget({ LANGSMITH_PROJECT: 'mine' }, dev)).toMatchObject({
      endpoint: dev.endpoint,
      project: 'mine',
    });
    expect(resolveTracingTarget({}, { project: 'default' })).toBeUndefined();
  });
});

describe('run derivation', () => {
  const root = '0e01bf50-474d-4536-810f-67cba2b1fe5e';
  const child = 'a8024e23-5b82-47fd-970e-f6a5ba3f5097';

  it('derives trace_id, dotted_order, parent_run_ids and is_root', () => {
    const start = '2024-09-19T17:16:48.521691Z';
    const parent = toRecord({ id: root, start_time: start }, 's', undefined);
    expect(parent).toMatchObject({
      trace_id: root,
      dotted_order: `20240919T171648521691Z${root}`,
      is_root: true,
      parent_run_ids: [],
      status: 'pending',
    });
    const record = toRecord(
      { id: child, parent_run_id: root, start_time: 1726766208523, end_time: 1726766208600 },
      's',
      parent.dotted_order,
    );
    expect(record).toMatchObject({
      trace_id: root,
      parent_run_id: root,
      parent_run_ids: [root],
      is_root: false,
      status: 'success',
      dotted_order: `20240919T171648521691Z${root}.20240919T171648523000Z${child}`,
    });
    expect(dottedStamp('2024-09-19T17:16:48Z')).toBe('20240919T171648000000Z');
  });

  it('reads token usage from the shapes LangChain reports it in', () => {
    expect(
      usageOfOutputs({ usage_metadata: { input_tokens: 2, output_tokens: 3 } }, null),
    ).toMatchObject({ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 });
    const generations = [
      [
        {
          message: {
            kwargs: { usage_metadata: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } },
          },
        },
      ],
    ];
    expect(usageOfOutputs({ generations }, null)).toMatchObject({ total_tokens: 2 });
    expect(usageOfOutputs({ text: 'no usage' }, null)).toBeUndefined();
  });
});

describe('multipart ingest body', () => {
  it('joins a run from its main part and its field parts, in either order', () => {
    const b = 'XyZ';
    const part = (name: string, value: unknown) =>
      `--${b}\r\nContent-Disposition: form-data; name="${name}"\r\nContent-Type: application/json\r\n\r\n${JSON.stringify(value)}\r\n`;
    const body = Buffer.from(
      part(`post.${'1'.repeat(8)}.inputs`, { q: 1 }) +
        part(`post.${'1'.repeat(8)}`, { name: 'r', inputs: 'stale' }) +
        part(`patch.${'2'.repeat(8)}.outputs`, { a: 2 }) +
        part('feedback.x', { key: 'k', id: 'other' }) +
        part('attachment.x.file', {}) +
        `--${b}--\r\n`,
    );
    const parsed = parseMultipartRuns(body, b);
    expect(parsed.post).toEqual([{ id: '11111111', name: 'r', inputs: { q: 1 } }]);
    expect(parsed.patch).toEqual([{ id: '22222222', outputs: { a: 2 } }]);
    // A feedback part is kept, its id the part's; attachments are not.
    expect(parsed.feedback).toEqual([{ id: 'x', key: 'k' }]);
    expect(parsed.ignored).toBe(1);
    expect(() =>
      parseMultipartRuns(Buffer.from(part('feedback.x.y', {}) + `--${b}--\r\n`), b),
    ).toThrow(/malformed/);
    expect(() =>
      parseMultipartRuns(Buffer.from(part('feedback.x', [1]) + `--${b}--\r\n`), b),
    ).toThrow(/not an object/);
  });
});

describe('filter language', () => {
  it('compiles comparisons and metadata pairs to SQL with parameters', () => {
    const params = new SqlParams();
    const sql = compileFilter(
      'and(eq(run_type, "llm"), eq(metadata_key, "thread_id"), eq(metadata_value, "t-1"), gte(total_tokens, 10))',
      params,
    );
    expect(sql).toContain("r.extra->'metadata'->>");
    expect(sql).toContain('r.run_type =');
    expect(params.values).toEqual([['t-1'], 'thread_id', 'llm', 10]);
    expect(() => compileFilter('eq(nonsense, 1)', new SqlParams())).toThrow(/unsupported/);
  });
});

describe('presigned feedback token routes', () => {
  const id = '0b7c7a5e-2f44-4d7e-9d1e-6a0f3c1d2e4f';
  it('opens only the GET and POST of a token URL, under the mount prefix', () => {
    expect(isFeedbackTokenUse('GET', `/api/v1/feedback/tokens/${id}`)).toBe(true);
    expect(isFeedbackTokenUse('POST', `/api/v1/feedback/tokens/${id}`)).toBe(true);
    expect(isFeedbackTokenUse('DELETE', `/api/v1/feedback/tokens/${id}`)).toBe(false);
    expect(isFeedbackTokenUse('POST', '/api/v1/feedback/tokens')).toBe(false);
    expect(isFeedbackTokenUse('GET', `/api/v1/feedback/tokens/${id}/x`)).toBe(false);
    expect(isFeedbackTokenUse('GET', `/api/v1/feedback/${id}`)).toBe(false);
    expect(isOpenTraceRoute('GET', `/p/api/v1/feedback/tokens/${id}`, '/p')).toBe(true);
    expect(isOpenTraceRoute('GET', `/api/v1/feedback/tokens/${id}`, '/p')).toBe(false);
    expect(isOpenTraceRoute('GET', `/api/v1/feedback/tokens/${id}`, '')).toBe(true);
  });
});
