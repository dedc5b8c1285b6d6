// Several server processes on one database act as one service, and a run survives the death of
// the process executing it.
import { Client } from '@langchain/langgraph-sdk';
import { describe, expect, it } from 'vitest';
import { useReplicas } from '../support/fixture.js';
import type { RunningServer } from '../support/server.js';

const hi = (content: string) => ({ messages: [{ role: 'user', content }] });
const env = { GRAPHDOCK_SLOW_STEP_MS: '800', GRAPHDOCK_RUN_LEASE_SECS: '2' };

const replicas = useReplicas({ env });

async function server(
  extraEnv: Record<string, string> = {},
): Promise<{ server: RunningServer; client: Client }> {
  const s = await replicas.start(extraEnv);
  return { server: s, client: new Client({ apiUrl: s.url, apiKey: null }) };
}

describe('replicas', () => {
  it('creates a run through one process and joins and streams it through another', async () => {
    const a = await server();
    const b = await server();
    const thread = await a.client.threads.create();
    const run = await a.client.runs.create(thread.thread_id, 'slow', { input: hi('shared') });
    const events: string[] = [];
    for await (const part of b.client.runs.joinStream(thread.thread_id, run.run_id))
      events.push(part.event);
    expect(events[0]).toBe('metadata');
    expect(events).toContain('values');
    expect((await b.client.runs.get(thread.thread_id, run.run_id)).status).toBe('success');
    const state = await a.client.threads.getState<{ messages: { content: string }[] }>(
      thread.thread_id,
    );
    expect(state.values.messages.map((m) => m.content)).toEqual([
      'shared',
      'first: shared',
      'second: first: shared',
    ]);
    await Promise.all([a.server.stop(), b.server.stop()]);
  });

  it('wakes the other process at once: its worker claims runs queued here, whose events reach a join, a wait and a stream here', async () => {
    // B has one slot, kept busy by a slow run: an echo run created through B queues, and only
    // A's worker can take it. Without NOTIFY, A would find it by polling (every second) and B's
    // join would hear of its end by polling too.
    const a = await server();
    const b = await server({ N_JOBS_PER_WORKER: '1' });
    const busy = await b.client.threads.create();
    // Waited for through B, so it starts on B's worker as it is created.
    const holding = b.client.runs.wait(busy.thread_id, 'slow', { input: hi('hold the slot') });
    while ((await b.client.runs.list(busy.thread_id))[0]?.status !== 'running')
      await new Promise((r) => setTimeout(r, 10));
    const thread = await b.client.threads.create();
    // Created and then joined, waited for, and streamed by the request that created it: each
    // queues on B, runs on A, and is followed on B.
    const ways = {
      join: async (input: ReturnType<typeof hi>) => {
        const run = await b.client.runs.create(thread.thread_id, 'echo', { input });
        return b.client.runs.join(thread.thread_id, run.run_id);
      },
      wait: (input: ReturnType<typeof hi>) =>
        b.client.runs.wait(thread.thread_id, 'echo', { input }),
      stream: async (input: ReturnType<typeof hi>) => {
        let values: unknown;
        for await (const part of b.client.runs.stream(thread.thread_id, 'echo', { input }))
          if (part.event === 'values') values = part.data;
        return values;
      },
    };
    for (const [way, follow] of Object.entries(ways)) {
      const started = performance.now();
      const result = (await follow(hi(way))) as { messages: { content: string }[] };
      const took = performance.now() - started;
      expect(result.messages.at(-1)?.content).toBe(`echo: ${way}`);
      expect(took).toBeLessThan(600);
    }
    await holding;
    await Promise.all([a.server.stop(), b.server.stop()]);
  });

  it('recovers a run whose process was killed mid-run, on another process', async () => {
    const doomed = await server();
    const thread = await doomed.client.threads.create();
    const run = await doomed.client.runs.create(thread.thread_id, 'slow', { input: hi('survive') });
    for (;;) {
      if ((await doomed.client.runs.get(thread.thread_id, run.run_id)).status === 'running') break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await doomed.server.stop('SIGKILL');

    const rescuer = await server();
    const result = await rescuer.client.runs.join(thread.thread_id, run.run_id);
    expect((result as { messages: { content: string }[] }).messages.map((m) => m.content)).toEqual([
      'survive',
      'first: survive',
      'second: first: survive',
    ]);
    expect((await rescuer.client.runs.get(thread.thread_id, run.run_id)).status).toBe('success');
    expect((await rescuer.client.threads.get(thread.thread_id)).status).toBe('idle');
    let attempts = 0;
    for await (const part of rescuer.client.runs.joinStream(thread.thread_id, run.run_id)) {
      if (part.event === 'metadata')
        attempts = Math.max(attempts, (part.data as { attempt: number }).attempt);
    }
    expect(attempts).toBe(2);
  }, 60_000);
});
