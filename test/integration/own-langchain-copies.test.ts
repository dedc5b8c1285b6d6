// A project with its own package.json brings its own copies of LangGraph and LangChain (the image
// installs them into the project, apart from Graphdock's): its graphs then build states,
// messages, interrupts and commands from classes Graphdock's own copies have never seen. Here the
// project's `node_modules` holds copies of @langchain/core, @langchain/langgraph and the
// checkpoint package (their other dependencies resolve from the checkout's), and a run of each
// kind must still work: waited and streamed runs, an interrupt resumed with a command, subgraph
// namespaces, the store, update_state, schemas, and the thread protocol's channels.
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client as ProtocolClient } from '@langchain/langgraph-sdk-protocol';
import { afterAll, describe, expect, it } from 'vitest';
import { useRuntime } from '../support/fixture.js';
import { REPO_ROOT } from '../support/server.js';

// Inside the checkout, so that what is not copied resolves from its node_modules.
const project = mkdtempSync(join(REPO_ROOT, '.cache', 'own-copies-'));
const COPIED = ['@langchain/core', '@langchain/langgraph', '@langchain/langgraph-checkpoint'];
for (const pkg of COPIED)
  cpSync(join(REPO_ROOT, 'node_modules', pkg), join(project, 'node_modules', pkg), {
    recursive: true,
  });
cpSync(join(REPO_ROOT, 'examples', 'graphs'), join(project, 'graphs'), { recursive: true });
cpSync(join(REPO_ROOT, 'test/fixtures/protocol/graphs.ts'), join(project, 'graphs/protocol.ts'));
// Answers with where its node's LangGraph and LangChain modules were loaded from.
writeFileSync(
  join(project, 'graphs/where.ts'),
  `import { createRequire } from 'node:module';
import { AIMessage } from '@langchain/core/messages';
import { MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
const require = createRequire(import.meta.url);
export const graph = new StateGraph(MessagesAnnotation)
  .addNode('where', () => ({
    messages: [new AIMessage({ content: [require.resolve('@langchain/langgraph'), require.resolve('@langchain/core/messages')].join('\\n') })],
  }))
  .addEdge(START, 'where')
  .compile();
`,
);
writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'own', type: 'module' }));
writeFileSync(
  join(project, 'langgraph.json'),
  JSON.stringify({
    graphs: {
      where: './graphs/where.ts:graph',
      echo: './graphs/echo.ts:graph',
      interrupt: './graphs/interrupt.ts:graph',
      nested: './graphs/nested.ts:graph',
      memory: './graphs/memory.ts:graph',
      agent: './graphs/protocol.ts:agent',
    },
  }),
);

const rt = useRuntime({ config: join(project, 'langgraph.json') });
afterAll(() => rmSync(project, { recursive: true, force: true }));

type Message = Record<string, unknown> & { type: string; content: unknown };
const messagesOf = (values: unknown) => (values as { messages: Message[] }).messages;
const userSays = (content: string) => ({ messages: [{ role: 'user', content }] });

describe("a project's own LangGraph and LangChain copies", () => {
  it('are what its graphs load, not the server’s', async () => {
    const out = await rt.client.runs.wait(null, 'where', { input: userSays('where?') });
    const paths = String(messagesOf(out).at(-1)!.content).split('\n');
    expect(paths).toHaveLength(2);
    for (const path of paths) expect(path.startsWith(join(project, 'node_modules'))).toBe(true);
  });

  it('serve waited and streamed runs, with messages in the API shape', async () => {
    const thread = await rt.client.threads.create();
    const out = await rt.client.runs.wait(thread.thread_id, 'echo', { input: userSays('hi') });
    const [human, ai] = messagesOf(out);
    expect(human).toMatchObject({ type: 'human', content: 'hi', name: null, example: false });
    expect(ai).toMatchObject({
      type: 'ai',
      content: 'echo: hi',
      tool_calls: [],
      invalid_tool_calls: [],
      usage_metadata: null,
    });
    const events: string[] = [];
    for await (const chunk of rt.client.runs.stream(thread.thread_id, 'echo', {
      input: userSays('again'),
      streamMode: ['values', 'updates', 'messages-tuple'],
    }))
      events.push(chunk.event);
    // Sorted: a node's returned message reaches the stream through LangChain's callback queue,
    // so whether it comes before or after the node's update depends on what else is queued.
    expect(events.sort()).toEqual(['messages', 'metadata', 'updates', 'values', 'values']);
    const state = await rt.client.threads.getState(thread.thread_id);
    expect(messagesOf(state.values).map((m) => `${m.type}:${String(m.content)}`)).toEqual([
      'human:hi',
      'ai:echo: hi',
      'human:again',
      'ai:echo: again',
    ]);
  });

  it('stop at an interrupt and resume from a command', async () => {
    const thread = await rt.client.threads.create();
    const first = (await rt.client.runs.wait(thread.thread_id, 'interrupt', {
      input: userSays('go'),
    })) as { __interrupt__?: { value: unknown }[] };
    expect(first.__interrupt__?.map((i) => i.value)).toEqual([{ question: 'Approve the draft?' }]);
    expect((await rt.client.threads.get(thread.thread_id)).status).toBe('interrupted');
    expect((await rt.client.threads.getState(thread.thread_id)).next).toEqual(['review']);
    const resumed = (await rt.client.runs.wait(thread.thread_id, 'interrupt', {
      command: { resume: 'yes' },
    })) as { approved: boolean };
    expect(resumed.approved).toBe(true);
    expect((await rt.client.threads.get(thread.thread_id)).status).toBe('idle');
  });

  it('stream subgraph namespaces and custom events, and read the store', async () => {
    const events: string[] = [];
    for await (const chunk of rt.client.runs.stream(null, 'nested', {
      input: userSays('x'),
      streamMode: ['custom', 'updates'],
      streamSubgraphs: true,
    }))
      events.push(chunk.event.replace(/:[0-9a-f-]{36}$/, ''));
    expect(events).toEqual(['metadata', 'custom', 'custom', 'updates', 'updates|inner', 'updates']);

    const config = { configurable: { user_id: `own-${Date.now()}` } };
    await rt.client.runs.wait(null, 'memory', { input: userSays('remember tea'), config });
    const out = await rt.client.runs.wait(null, 'memory', {
      input: userSays('remember rain'),
      config,
    });
    expect(messagesOf(out).at(-1)!.content).toBe('I remember: rain; tea');
    const items = await rt.client.store.searchItems(['memories', config.configurable.user_id]);
    expect(items.items.map((i) => String(i.value.fact)).sort()).toEqual(['rain', 'tea']);
  });

  it('take update_state as a node and describe their schemas', async () => {
    const thread = await rt.client.threads.create();
    await rt.client.runs.wait(thread.thread_id, 'echo', { input: userSays('hi') });
    await rt.client.threads.updateState(thread.thread_id, {
      values: { messages: [{ role: 'user', content: 'added' }] },
      asNode: 'echo',
    });
    const state = await rt.client.threads.getState(thread.thread_id);
    expect(messagesOf(state.values).map((m) => m.type)).toEqual(['human', 'ai', 'human']);
    const [nested] = await rt.client.assistants.search({ graphId: 'nested' });
    const schemas = await rt.client.assistants.getSchemas(nested!.assistant_id);
    expect(Object.keys(schemas.state_schema?.properties ?? {})).toContain('messages');
    expect(Object.keys(await rt.client.assistants.getSubgraphs(nested!.assistant_id))).toEqual([
      'inner',
    ]);
  });

  it('give the thread protocol every channel, and take input.respond', async () => {
    const client = new ProtocolClient({ apiUrl: rt.url, apiKey: null });
    const thread = client.threads.stream({ assistantId: 'agent' });
    const channels = ['lifecycle', 'values', 'updates', 'messages', 'tools', 'custom'] as const;
    const all = await thread.subscribe({
      channels: [...channels, 'checkpoints', 'tasks', 'input'],
    });
    const methods = new Set<string>();
    let asked: { namespace: string[]; data: Record<string, unknown> } | undefined;
    await thread.run.start({ input: userSays('add') });
    for await (const e of all) {
      methods.add(e.method);
      const { params } = e as unknown as {
        params: { namespace: string[]; data: Record<string, unknown> };
      };
      if (e.method === 'input.requested') asked = params;
      if (e.method === 'lifecycle' && !params.namespace.length && params.data.event !== 'running')
        break;
    }
    expect([...methods].sort()).toEqual(
      [...channels, 'checkpoints', 'tasks', 'input.requested'].sort(),
    );
    expect(asked?.data.payload).toEqual({ question: 'Approve?' });
    const resumed = await thread.subscribe({ channels: ['lifecycle'] });
    await thread.input.respond({
      interrupt_id: String(asked!.data.interrupt_id),
      response: 'yes',
      namespace: asked!.namespace,
    });
    let ended: unknown;
    for await (const e of resumed) {
      const { params } = e as unknown as {
        params: { namespace: string[]; data: { event: string } };
      };
      if (!params.namespace.length && params.data.event !== 'running') ended = params.data.event;
      if (ended === 'completed') break;
    }
    expect(ended).toBe('completed');
    const state = await thread.state.get({ namespace: [], keys: ['answer'] });
    expect(state.values).toEqual({ answer: 'yes' });
  });
});
