// N_JOBS_PER_WORKER=0: a replica that serves the API and executes no run, as the official
// chart's API pods do once the queue is split off. Real processes on one PostgreSQL.
import { Client } from '@langchain/langgraph-sdk';
import { describe, expect, it } from 'vitest';
import { useReplicas } from '../support/fixture.js';
import { postCommand } from '../support/protocol.js';

type Messages = { messages: { content: string }[] };
const hi = (content: string) => ({ messages: [{ role: 'user', content }] });
const contents = (values: unknown) => (values as Messages).messages.map((m) => m.content);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const replicas = useReplicas();

describe('a replica with no run slots', () => {
  let api: Client;
  let threadId: string;

  it('takes runs that wait until a replica with slots executes them', async () => {
    const server = await replicas.start({ N_JOBS_PER_WORKER: '0' });
    expect(server.output()).toMatch(/N_JOBS_PER_WORKER=0: this process executes no runs/);
    api = new Client({ apiUrl: server.url, apiKey: null });
    const thread = await api.threads.create();
    threadId = thread.thread_id;
    const run = await api.runs.create(thread.thread_id, 'echo', { input: hi('queued') });
    // Alone, it never executes the run: it stays pending past several polls.
    await sleep(2_500);
    expect((await api.runs.get(thread.thread_id, run.run_id)).status).toBe('pending');

    await replicas.start({ N_JOBS_PER_WORKER: '2' });
    const result = await api.runs.join(thread.thread_id, run.run_id);
    expect(contents(result)).toEqual(['queued', 'echo: queued']);
    expect((await api.runs.get(thread.thread_id, run.run_id)).status).toBe('success');
  });

  it('answers waits and streams of the runs it creates, executed by the other replica', async () => {
    const thread = { thread_id: threadId };
    const waited = await api.runs.wait(thread.thread_id, 'echo', { input: hi('waited') });
    expect(contents(waited)).toEqual(['queued', 'echo: queued', 'waited', 'echo: waited']);
    const events: string[] = [];
    for await (const part of api.runs.stream(thread.thread_id, 'echo', {
      input: hi('streamed'),
      streamMode: 'values',
    }))
      events.push(part.event);
    expect(events[0]).toBe('metadata');
    expect(events.filter((e) => e === 'values').length).toBeGreaterThan(0);
    const state = await api.threads.getState<Messages>(thread.thread_id);
    expect(contents(state.values).slice(2)).toEqual([
      'waited',
      'echo: waited',
      'streamed',
      'echo: streamed',
    ]);
  });

  it('starts a thread protocol run that the other replica executes, its events on the stream', async () => {
    const thread = await api.threads.create();
    const url = replicas.servers[0]!.url;
    const started = await postCommand(url, thread.thread_id, {
      id: 1,
      method: 'run.start',
      params: { assistant_id: 'echo', input: hi('protocol') },
    });
    expect(started.status).toBe(200);
    const res = await fetch(`${url}/threads/${thread.thread_id}/stream/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ channels: ['lifecycle', 'values'] }),
    });
    expect(res.status).toBe(200);
    let text = '';
    const decoder = new TextDecoder();
    for await (const chunk of res.body!) {
      text += decoder.decode(chunk as Uint8Array, { stream: true });
      if (/"event":"completed"/.test(text)) break;
    }
    expect(text).toMatch(/"event":"running"/);
    expect(text).toContain('echo: protocol');
    expect(text).toMatch(/"event":"completed"/);
  });
});
