// Runs that outlive BG_JOB_TIMEOUT_SECS, and streams whose client goes away.
import { describe, expect, it } from 'vitest';
import { useRuntime } from '../support/fixture.js';

const rt = useRuntime({ env: { GRAPHDOCK_SLOW_STEP_MS: '400', BG_JOB_TIMEOUT_SECS: '0.6' } });
const hi = (content: string) => ({ messages: [{ role: 'user', content }] });

describe('run limits', () => {
  it('ends a run that exceeds the timeout with status timeout and an error', async () => {
    const thread = await rt.client.threads.create();
    const res = await rt.http(`/threads/${thread.thread_id}/runs/wait`, {
      method: 'POST',
      json: { assistant_id: 'slow', input: hi('too slow') },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('location')).toMatch(
      new RegExp(`^/threads/${thread.thread_id}/runs/[0-9a-f-]+/join$`),
    );
    expect(await res.json()).toEqual({
      __error__: { error: 'TimeoutError', message: 'run exceeded 0.6 s' },
    });
    const [run] = await rt.client.runs.list(thread.thread_id);
    expect(run?.status).toBe('timeout');
    expect((await rt.client.threads.get(thread.thread_id)).status).toBe('error');
  });

  it('cancels the run when a streaming client disconnects with on_disconnect=cancel', async () => {
    const thread = await rt.client.threads.create();
    const controller = new AbortController();
    const res = await fetch(`${rt.url}/threads/${thread.thread_id}/runs/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ assistant_id: 'echo', input: hi('first') }),
    });
    await res.text();
    const streaming = await fetch(`${rt.url}/threads/${thread.thread_id}/runs/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ assistant_id: 'slow', input: hi('leave'), on_disconnect: 'cancel' }),
      signal: controller.signal,
    });
    const reader = streaming.body?.getReader();
    const first = await reader?.read();
    expect(new TextDecoder().decode(first?.value as Uint8Array | undefined)).toContain(
      'event: metadata',
    );
    controller.abort();
    const deadline = Date.now() + 10_000;
    let status = '';
    while (Date.now() < deadline) {
      const runs = await rt.client.runs.list(thread.thread_id);
      status = runs[0]?.status ?? '';
      if (status === 'interrupted') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe('interrupted');
  });
});
