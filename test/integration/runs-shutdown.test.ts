// SIGTERM of a replica: it keeps its runs leased while they drain, exits within the grace period
// (plus a few seconds) whatever streams are attached, and a run it hands back is not one of the
// BG_JOB_MAX_ATTEMPTS (only a worker that died costs an attempt). Real processes, one PostgreSQL.
import { Client } from '@langchain/langgraph-sdk';
import { beforeAll, describe, expect, it } from 'vitest';
import { useReplicas } from '../support/fixture.js';
import type { RunningServer } from '../support/server.js';

type Messages = { messages: { content: string }[] };
type Part = { id?: string; event: string; data: unknown };
const hi = (content: string) => ({ messages: [{ role: 'user', content }] });
const contents = (values: unknown) => (values as Messages).messages.map((m) => m.content);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const steps = (input: string) => [input, `first: ${input}`, `second: first: ${input}`];
const env = {
  GRAPHDOCK_SLOW_STEP_MS: '4000',
  GRAPHDOCK_RUN_LEASE_SECS: '2',
  BG_JOB_MAX_ATTEMPTS: '2',
};

const replicas = useReplicas({ env });

async function server(
  extra: Record<string, string> = {},
): Promise<{ server: RunningServer; client: Client }> {
  const s = await replicas.start(extra);
  return { server: s, client: new Client({ apiUrl: s.url, apiKey: null }) };
}

async function untilRunning(client: Client, threadId: string, runId: string): Promise<void> {
  while ((await client.runs.get(threadId, runId)).status !== 'running') await sleep(20);
}

/** SIGTERM, then how long the process took to exit, and its exit code. */
async function terminate(s: RunningServer): Promise<{ seconds: number; code: number | null }> {
  const started = performance.now();
  const code = await s.stop('SIGTERM');
  return { seconds: (performance.now() - started) / 1000, code };
}

/** The highest `attempt` among a run's metadata events. */
async function attempts(client: Client, threadId: string, runId: string): Promise<number> {
  let highest = 0;
  for await (const part of client.runs.joinStream(threadId, runId) as AsyncIterable<Part>)
    if (part.event === 'metadata')
      highest = Math.max(highest, (part.data as { attempt: number }).attempt);
  return highest;
}

describe('shutdown', () => {
  // The replica that stays up through the file's shutdowns.
  let other: { server: RunningServer; client: Client };
  beforeAll(async () => {
    other = await server();
  }, 90_000);

  /** A slow run on a new thread, claimed by `a`: the other replica is frozen until it runs. */
  async function runClaimedBy(a: { client: Client }, content: string) {
    const thread = await a.client.threads.create();
    other.server.process.kill('SIGSTOP');
    try {
      const run = await a.client.runs.create(thread.thread_id, 'slow', { input: hi(content) });
      await untilRunning(a.client, thread.thread_id, run.run_id);
      return { thread, run };
    } finally {
      other.server.process.kill('SIGCONT');
    }
  }

  it('keeps renewing the leases of the runs it drains: no other replica executes them again', async () => {
    // The grace period outlasts the run (8 s) and the lease (2 s) many times over.
    const a = await server({ BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS: '60' });
    const { thread, run } = await runClaimedBy(a, 'drain');
    const stopped = await terminate(a.server);
    expect(stopped.code).toBe(0);
    expect((await other.client.runs.get(thread.thread_id, run.run_id)).status).toBe('success');
    expect(await attempts(other.client, thread.thread_id, run.run_id)).toBe(1);
    const state = await other.client.threads.getState(thread.thread_id);
    expect(contents(state.values)).toEqual(steps('drain'));
  }, 90_000);

  it('exits within the grace period whatever streams are attached; they end cleanly and resume elsewhere', async () => {
    const a = await server({ BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS: '2' });
    const thread = await a.client.threads.create();
    let runId = '';
    let lastId = '';
    const first: Part[] = [];
    const stream = a.client.runs.stream(thread.thread_id, 'slow', {
      input: hi('handed over'),
      streamResumable: true,
      onRunCreated: ({ run_id }) => {
        runId = run_id;
      },
    }) as AsyncIterable<Part>;
    const iterator = stream[Symbol.asyncIterator]();
    // The other replica is frozen until the run is under way (its first values), so that this
    // one executes it and hands it back: otherwise the other one may claim it first.
    other.server.process.kill('SIGSTOP');
    try {
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
        first.push(next.value);
        if (next.value.event === 'values') break;
      }
    } finally {
      other.server.process.kill('SIGCONT');
    }
    // Another client follows the same run through a join stream.
    const joined: Part[] = [];
    const join = (async () => {
      for await (const part of a.client.runs.joinStream(
        thread.thread_id,
        runId,
      ) as AsyncIterable<Part>)
        joined.push(part);
    })();
    await sleep(200);
    const following = (async () => {
      for (let next = await iterator.next(); !next.done; next = await iterator.next())
        first.push(next.value);
    })();
    const stopped = await terminate(a.server);
    // Both streams ended without an error.
    await Promise.all([following, join]);
    expect(stopped.seconds).toBeLessThan(2 + 6);
    expect(stopped.code).toBe(0);
    for (const part of first) if (part.id) lastId = part.id;
    expect(lastId).not.toBe('');
    // Resumed on the other replica from the last id seen: the rest of the run, nothing again.
    const rest: Part[] = [];
    for await (const part of other.client.runs.joinStream(thread.thread_id, runId, {
      lastEventId: lastId,
    }) as AsyncIterable<Part>)
      rest.push(part);
    expect(rest.every((part) => Number(part.id) > Number(lastId))).toBe(true);
    const values = [...first, ...rest].filter((part) => part.event === 'values');
    expect(contents(values.at(-1)?.data)).toEqual(steps('handed over'));
    expect((await other.client.runs.get(thread.thread_id, runId)).status).toBe('success');
    // Handed back by this replica, finished by the other one.
    expect(await attempts(other.client, thread.thread_id, runId)).toBe(2);
  }, 90_000);

  it('answers a wait for a run another replica executes with its result, not a 503 the SDK would send again', async () => {
    // One slot, taken by a run of its own: the run it is asked to wait for goes to the other.
    const a = await server({ N_JOBS_PER_WORKER: '1', BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS: '60' });
    const { thread: own, run: busy } = await runClaimedBy(a, 'own');
    const thread = await a.client.threads.create();
    // No retries, as a client that is not the SDK: a 503 would show as one.
    const once = new Client({
      apiUrl: a.server.url,
      apiKey: null,
      callerOptions: { maxRetries: 0 },
    });
    const waited = once.runs.wait(thread.thread_id, 'slow', { input: hi('elsewhere') });
    let elsewhere: string | undefined;
    while (!elsewhere) {
      const [run] = await other.client.runs.list(thread.thread_id);
      if (run?.status === 'running') elsewhere = run.run_id;
      else await sleep(20);
    }
    // SIGTERM, and its own run ends at once: it then holds only the wait, while the run waited
    // for has about 7 s to go, longer than the few seconds answers in flight are given.
    const stopping = terminate(a.server);
    await sleep(200);
    await other.client.runs.cancel(own.thread_id, busy.run_id);
    expect(contents(await waited)).toEqual(steps('elsewhere'));
    const stopped = await stopping;
    expect(stopped.code).toBe(0);
    expect(stopped.seconds).toBeLessThan(60);
    const runs = await other.client.runs.list(thread.thread_id);
    expect(runs.map((r) => [r.run_id, r.status])).toEqual([[elsewhere, 'success']]);
  }, 90_000);

  it('does not count a run handed back at shutdown as an attempt: one handed back and one crash still succeed with 2 attempts allowed', async () => {
    const a = await server({ BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS: '0' });
    const { thread, run } = await runClaimedBy(a, 'attempts');
    // Handed back at once; the other replica, the only one left, takes it (attempt 2)...
    expect((await terminate(a.server)).code).toBe(0);
    await untilRunning(other.client, thread.thread_id, run.run_id);
    // ... and dies: that attempt counts, the handed-back one does not.
    await other.server.stop('SIGKILL');
    const rescuer = await server();
    const result = await rescuer.client.runs.join(thread.thread_id, run.run_id).catch((err) => {
      throw new Error(`${String(err)}\n${rescuer.server.output()}`);
    });
    expect(contents(result)).toEqual(steps('attempts'));
    const ended = await rescuer.client.runs.get(thread.thread_id, run.run_id);
    expect(ended.status).toBe('success');
    expect(await attempts(rescuer.client, thread.thread_id, run.run_id)).toBe(3);
    await rescuer.server.stop();
  }, 150_000);
});
