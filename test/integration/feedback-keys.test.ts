// A run's `feedback_keys`: when it succeeds, the runtime hands out one presigned feedback URL per
// key (a `feedback` event last in its stream, `__feedback__` in its wait result), made by the
// trace store its runs are traced into; a user posts feedback there without an API key and it
// lands on the run's trace. Without tracing the keys are refused, not ignored.
import { Client } from 'langsmith';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../common/db/index.js';
import { useRuntime, type RuntimeFixture } from '../support/fixture.js';
import { collect } from '../support/iterables.js';

const hi = (text: string) => ({ messages: [{ role: 'user', content: text }] });

/** `POST /threads/{id}/runs/wait`: the run's result. */
async function waitFor(rt: RuntimeFixture, threadId: string, json: unknown) {
  const res = await rt.http(`/threads/${threadId}/runs/wait`, { method: 'POST', json });
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, unknown>;
}

/** The feedback recorded on a run, once `count` items are there (ingest is asynchronous). */
async function feedbackOf(ls: Client, runId: string, count: number) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const items = await collect(ls.listFeedback({ runIds: [runId] }));
    if (items.length >= count || Date.now() > deadline) return items;
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('graphdock dev, tracing into its own store', () => {
  const dev = useRuntime({ command: 'dev' });

  it('answers a wait with a URL per key, where feedback is recorded without an API key', async () => {
    const thread = await dev.client.threads.create();
    // Both SDKs send feedback_keys with streams only: a wait is asked for as a raw request.
    const result = (await waitFor(dev, thread.thread_id, {
      assistant_id: 'echo',
      input: hi('rate me'),
      feedback_keys: ['helpful', 'correct'],
    })) as { messages: unknown[]; __feedback__: Record<string, string> };
    expect(result.messages).toHaveLength(2);
    const urls = result.__feedback__;
    expect(Object.keys(urls).sort()).toEqual(['correct', 'helpful']);
    for (const url of Object.values(urls))
      expect(url.startsWith(`${dev.url}/api/v1/feedback/tokens/`), url).toBe(true);

    const posted = await fetch(urls.helpful!, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ score: 1, comment: 'spot on' }),
    });
    expect(posted.status, await posted.clone().text()).toBeLessThan(300);
    const got = await fetch(`${urls.correct!}?score=0`);
    expect(got.status, await got.clone().text()).toBeLessThan(300);

    const [run] = await dev.client.runs.list(thread.thread_id);
    const ls = new Client({ apiUrl: `${dev.url}/api/v1` });
    const items = await feedbackOf(ls, run!.run_id, 2);
    expect(
      items
        .map((f) => [f.key, f.score, f.comment ?? null])
        .sort((a, b) => (a[0]! < b[0]! ? -1 : 1)),
    ).toEqual([
      ['correct', 0, null],
      ['helpful', 1, 'spot on'],
    ]);
  });

  it('ends a stream with the feedback event, and a failed run gets none', async () => {
    const parts = await collect(
      dev.client.runs.stream(null, 'echo', {
        input: hi('stream me'),
        feedbackKeys: ['helpful'],
        streamMode: ['values'],
      }),
    );
    const events = parts.map((p) => p.event as string);
    expect(events.at(-1)).toBe('feedback');
    expect(Object.keys(parts.at(-1)!.data as object)).toEqual(['helpful']);

    const thread = await dev.client.threads.create();
    const failed = await waitFor(dev, thread.thread_id, {
      assistant_id: 'echo',
      input: hi('x'),
      config: { recursion_limit: 1 },
      feedback_keys: ['helpful'],
    });
    expect(failed.__error__).toBeDefined();
    expect(failed.__feedback__).toBeUndefined();
  });
});

describe('a runtime that traces nothing', () => {
  const rt = useRuntime({ env: { LANGSMITH_TRACING: 'false' } });

  it('refuses feedback_keys with a 422 naming them, and creates no run', async () => {
    const thread = await rt.client.threads.create();
    const res = await rt.http(`/threads/${thread.thread_id}/runs`, {
      method: 'POST',
      json: { assistant_id: 'echo', input: hi('x'), feedback_keys: ['helpful'] },
    });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { detail: { loc: string[]; msg: string }[] };
    expect(body.detail[0]!.loc).toEqual(['body', 'feedback_keys']);
    expect(body.detail[0]!.msg).toMatch(/tracing/);
    expect(await rt.client.runs.list(thread.thread_id)).toEqual([]);
    // An empty list asks for nothing and is accepted.
    const empty = await rt.client.runs.wait(thread.thread_id, 'echo', {
      input: hi('y'),
      feedbackKeys: [],
    });
    expect(empty).not.toHaveProperty('__feedback__');
  });
});

// Nothing listens there: token requests are refused, and the SDK would retry them.
const DOWN_ENDPOINT = `http://127.0.0.1:${await freePort()}/api/v1`;

describe('a runtime whose trace endpoint is down', () => {
  const rt = useRuntime({ env: { GRAPHDOCK_TRACES_ENDPOINT: DOWN_ENDPOINT } });

  it('ends a run with feedback_keys within seconds, its feedback event empty', async () => {
    const started = performance.now();
    const parts = await collect(
      rt.client.runs.stream(null, 'echo', { input: hi('x'), feedbackKeys: ['helpful'] }),
    );
    expect(performance.now() - started).toBeLessThan(15_000);
    expect(parts.at(-1)).toMatchObject({ event: 'feedback', data: {} });
    expect(rt.server.output()).toMatch(/no feedback URL for this key/);
  });
});
