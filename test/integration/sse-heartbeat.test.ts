// A stream quiet for longer than the heartbeat interval: the official SDK must see only the
// run's events, none without a name (its decoder makes one of a blank line after a comment).
import { describe, expect, it } from 'vitest';
import { useRuntime } from '../support/fixture.js';

// Two steps of 3.5 s: at least one heartbeat (every 5 s) falls inside the run.
const rt = useRuntime({ env: { GRAPHDOCK_SLOW_STEP_MS: '3500' } });

describe('heartbeats', () => {
  it('reach the official SDK as nothing at all', async () => {
    const thread = await rt.client.threads.create();
    const events: string[] = [];
    for await (const part of rt.client.runs.stream(thread.thread_id, 'slow', {
      input: { messages: [{ role: 'user', content: 'hi' }] },
      streamMode: 'updates',
    }))
      events.push(part.event);
    expect(events).toEqual(['metadata', 'updates', 'updates']);
  });

  it('are sent on the wire while the run is quiet', async () => {
    const res = await rt.http('/runs/stream', {
      method: 'POST',
      json: { assistant_id: 'slow', input: { messages: [] }, stream_mode: 'updates' },
    });
    const body = await res.text();
    expect(body).toMatch(/^: heartbeat$/m);
    expect(body).not.toMatch(/^: heartbeat\n\n/m);
  });
});
