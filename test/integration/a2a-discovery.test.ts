// Discovery from the server's base URL alone, with the official @a2a-js/sdk client: the
// well-known agent card without `assistant_id` describes the default assistant (the only
// graph's, or the one GRAPHDOCK_A2A_DEFAULT_ASSISTANT names), and a default that names nothing
// stops start-up.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { Message, Task } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { describe, expect, it } from 'vitest';
import { useRuntime } from '../support/fixture.js';
import { REPO_ROOT, startServer } from '../support/server.js';

const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'a2a');
const single = useRuntime({ config: join(FIXTURES, 'single.json') });
const several = useRuntime({
  config: join(FIXTURES, 'langgraph.json'),
  env: { GRAPHDOCK_A2A_DEFAULT_ASSISTANT: 'agent' },
});

const userMessage = (text: string): Message => ({
  kind: 'message',
  role: 'user',
  messageId: randomUUID(),
  parts: [{ kind: 'text', text }],
});

const answerOf = (result: unknown) =>
  (result as Task).status.message?.parts.map((p) => (p.kind === 'text' ? p.text : '')).join('');

describe('the well-known agent card without assistant_id', () => {
  it('is the only graph’s agent when the server has one graph', async () => {
    const client = await new ClientFactory().createFromUrl(single.url);
    const card = await client.getAgentCard();
    expect(card).toMatchObject({ name: 'echo', url: `${single.url}/a2a/echo` });
    const task = await client.sendMessage({ message: userMessage('found you') });
    expect(answerOf(task)).toBe('echo: found you');
  });

  it('is the assistant GRAPHDOCK_A2A_DEFAULT_ASSISTANT names when there are several graphs', async () => {
    const client = await new ClientFactory().createFromUrl(several.url);
    const card = await client.getAgentCard();
    expect(card).toMatchObject({
      name: 'agent',
      description: 'A tool-calling agent driven by a deterministic fake chat model',
      url: `${several.url}/a2a/agent`,
    });
    const task = await client.sendMessage({ message: userMessage('add 2 and 40') });
    expect(answerOf(task)).toBe('The answer is 42.');
    // Naming an assistant still picks that one.
    const echo = await (
      await several.http('/.well-known/agent-card.json?assistant_id=echo')
    ).json();
    expect(echo).toMatchObject({ name: 'echo' });
  });

  it('refuses to start when the setting names no existing assistant', async () => {
    // A UUID is looked up in the database (a graph id is checked the same way; see the unit test).
    const missing = randomUUID();
    const outcome = await startServer({
      config: join(FIXTURES, 'langgraph.json'),
      databaseUrl: several.db.url,
      env: { GRAPHDOCK_A2A_DEFAULT_ASSISTANT: missing },
    }).then(
      async (server) => {
        await server.stop();
        return 'started';
      },
      (err: Error) => err.message,
    );
    expect(outcome).toContain('server exited with 1');
    expect(outcome).toContain(`GRAPHDOCK_A2A_DEFAULT_ASSISTANT="${missing}" names no assistant`);
  }, 120_000);
});
