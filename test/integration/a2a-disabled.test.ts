// `http.disable_a2a: true` removes the A2A endpoint and the agent card; the rest still serves.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useRuntime } from '../support/fixture.js';
import { REPO_ROOT } from '../support/server.js';

const rt = useRuntime({ config: join(REPO_ROOT, 'test', 'fixtures', 'a2a', 'disabled.json') });

describe('http.disable_a2a', () => {
  it('answers 404 on both A2A routes while runs still work', async () => {
    const send = await rt.http('/a2a/echo', {
      method: 'POST',
      json: {
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: {
          message: { role: 'user', messageId: 'm1', parts: [{ kind: 'text', text: 'hi' }] },
        },
      },
    });
    expect(send.status).toBe(404);
    expect((await rt.http('/.well-known/agent-card.json?assistant_id=echo')).status).toBe(404);
    expect((await rt.http('/a2a/echo/.well-known/agent-card.json')).status).toBe(404);
    const result = await rt.client.runs.wait(null, 'echo', {
      input: { messages: [{ role: 'user', content: 'still here' }] },
    });
    expect(result).toMatchObject({
      messages: [{ content: 'still here' }, { content: 'echo: still here' }],
    });
  });
});
