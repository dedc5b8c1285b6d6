// Graph modules written for the official JS server, through the official JS SDK on a real server
// and PostgreSQL: factories taking the server runtime, `getLogger()` at import time, the JSON
// Schemas of zod graphs, LANGGRAPH_CONFIG defaults of the system assistants, and
// the request headers `http.logging_headers` selects for the request log.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useRuntime } from '../support/fixture.js';
import { REPO_ROOT } from '../support/server.js';

const rt = useRuntime({
  config: join(REPO_ROOT, 'test', 'fixtures', 'graph-modules', 'langgraph.json'),
  env: {
    // Request log entries are written at `info` when `http.logging_headers` is set.
    LOG_LEVEL: 'info',
    LANGGRAPH_CONFIG: JSON.stringify({
      logging: { configurable: { tone: 'dry' }, recursion_limit: 7, context: { tenant: 'acme' } },
      not_a_graph: { configurable: { ignored: true } },
    }),
  },
});

/** The server's JSON log entries, in order (pino writes one per line). */
function logEntries(): Record<string, unknown>[] {
  return rt.server
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return []; // the first line of the kept tail may be cut
      }
    });
}

describe('getLogger() in a graph module', () => {
  // First in the file: the import-time entry is among the earliest the server writes.
  it('works at import time and in nodes, writing through the server logger', async () => {
    const imported = logEntries().find((e) => e.msg === 'logging graph imported');
    expect(imported).toMatchObject({ level: 40, marker: 'import-time' });
    const out = await rt.client.runs.wait(null, 'logging', { input: { text: 'hi' } });
    expect(out).toEqual({ text: 'logged hi' });
    const ran = logEntries().find((e) => e.msg === 'logging graph ran');
    expect(ran).toMatchObject({ level: 50, text: 'hi' });
  });
});

type Call = { access: string; execution: boolean; context: unknown };

describe('a graph factory taking (config, runtime)', () => {
  const calls = async () =>
    ((await rt.client.runs.wait(null, 'factory_calls', { input: {} })) as { calls: Call[] }).calls;
  /** The factory calls `action` made. */
  const callsOf = async (action: () => Promise<unknown>) => {
    const before = (await calls()).length;
    await action();
    return (await calls()).slice(before);
  };

  it('is built for each use with the access context the official server passes', async () => {
    const assistant = await rt.client.assistants.create({
      graphId: 'runtime_factory',
      context: { who: 'assistant', over: 'assistant' },
    });
    const thread = await rt.client.threads.create();
    let answer: unknown;
    const runCalls = await callsOf(async () => {
      answer = await rt.client.runs.wait(thread.thread_id, assistant.assistant_id, {
        input: {},
        context: { over: 'run' },
      });
    });
    // Only a graph built to execute a run has an execution runtime: with the run's context.
    const context = { who: 'assistant', over: 'run' };
    expect(answer).toEqual({
      answer: `built_for_threads_create_run ${JSON.stringify({ context })}`,
    });
    expect(runCalls).toContainEqual({ access: 'threads.create_run', execution: true, context });

    const readCalls = await callsOf(() => rt.client.threads.getState(thread.thread_id));
    expect(readCalls).toContainEqual({ access: 'threads.read', execution: false, context: null });
    const historyCalls = await callsOf(() => rt.client.threads.getHistory(thread.thread_id));
    expect(historyCalls).toContainEqual({
      access: 'threads.read',
      execution: false,
      context: null,
    });
    const updateCalls = await callsOf(() =>
      rt.client.threads.updateState(thread.thread_id, {
        values: { answer: 'edited' },
        asNode: 'built_for_threads_update',
      }),
    );
    expect(updateCalls).toContainEqual({
      access: 'threads.update',
      execution: false,
      context: null,
    });
    expect((await rt.client.threads.getState(thread.thread_id)).values).toEqual({
      answer: 'edited',
    });

    let drawing: { nodes: { id: string | number }[] } | undefined;
    const describeCalls = await callsOf(async () => {
      drawing = await rt.client.assistants.getGraph(assistant.assistant_id);
      await rt.client.assistants.getSchemas(assistant.assistant_id);
      await rt.client.assistants.getSubgraphs(assistant.assistant_id);
    });
    expect(drawing?.nodes.map((n) => n.id)).toContain('built_for_assistants_read');
    expect(describeCalls.filter((c) => c.access === 'assistants.read')).toHaveLength(3);

    const all = [...runCalls, ...readCalls, ...historyCalls, ...updateCalls, ...describeCalls];
    for (const call of all) expect(call.execution).toBe(call.access === 'threads.create_run');
  });
});

describe('GET /assistants/{id}/schemas', () => {
  const schemaDraft = 'https://json-schema.org/draft/2020-12/schema';

  it('derives a zod graph’s schemas as the official JS server does', async () => {
    const config = {
      $schema: schemaDraft,
      type: 'object',
      properties: {
        model: { type: 'string', enum: ['small', 'large'] },
        temperature: { type: 'number' },
      },
      required: ['model'],
      additionalProperties: false,
    };
    // What @langchain/langgraph-api 1.5.1 answers for the same graph.
    expect(await rt.client.assistants.getSchemas('zod_schemas')).toEqual({
      graph_id: 'zod_schemas',
      input_schema: {
        $schema: schemaDraft,
        type: 'object',
        properties: { question: { type: 'string' } },
        additionalProperties: false,
      },
      output_schema: {
        $schema: schemaDraft,
        type: 'object',
        properties: { answer: { type: 'string' } },
        required: ['answer'],
        additionalProperties: false,
      },
      // The state as an update: every key optional.
      state_schema: {
        $schema: schemaDraft,
        type: 'object',
        properties: {
          question: { type: 'string' },
          answer: { type: 'string' },
          score: { type: 'number' },
        },
        additionalProperties: false,
      },
      config_schema: config,
      context_schema: config,
    });
  });
});

describe('LANGGRAPH_CONFIG', () => {
  it('sets the config and context of the system assistant of each graph it names', async () => {
    const [system] = await rt.client.assistants.search({
      graphId: 'logging',
      metadata: { created_by: 'system' },
    });
    expect(system?.config).toEqual({ configurable: { tone: 'dry' }, recursion_limit: 7 });
    expect(system?.context).toEqual({ tenant: 'acme' });
    const [other] = await rt.client.assistants.search({
      graphId: 'zod_schemas',
      metadata: { created_by: 'system' },
    });
    expect(other?.config).toEqual({});
  });
});

describe('http.logging_headers', () => {
  it('logs each request with the headers it includes and does not exclude', async () => {
    const probe = randomUUID();
    const res = await rt.http(`/assistants/logging?probe=${probe}`, {
      headers: {
        'X-Request-ID': 'req-42',
        'x-cloud-trace-context': 'trace/1',
        'x-trace-secret': 'hidden',
        'x-other': 'unlisted',
        authorization: 'Bearer secret',
      },
    });
    expect(res.status).toBe(200);
    // The entry is written when the answer has been sent.
    let entry: Record<string, unknown> | undefined;
    for (let i = 0; i < 50 && !entry; i++) {
      entry = logEntries().find(
        (e) => (e.req as { url?: string } | undefined)?.url?.includes(probe) ?? false,
      );
      if (!entry) await new Promise((r) => setTimeout(r, 100));
    }
    expect(entry).toMatchObject({
      level: 30,
      req: { method: 'GET', url: `/assistants/logging?probe=${probe}` },
      res: { statusCode: 200 },
    });
    expect((entry?.req as { headers: unknown }).headers).toEqual({
      'x-request-id': 'req-42',
      'x-cloud-trace-context': 'trace/1',
      // Selected, but credentials are never written out.
      authorization: '[redacted]',
    });
  });
});
