// Assistants through the official JS SDK against a running server on real PostgreSQL.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../common/logging/index.js';
import { AssistantService, AssistantStore } from '../../runtime/assistants/index.js';
import { loadLanggraphConfig } from '../../runtime/config/index.js';
import { GraphRegistry } from '../../runtime/graphs/index.js';
import { useRuntime } from '../support/fixture.js';
import { EXAMPLES_CONFIG, exampleGraphIds } from '../support/server.js';

const rt = useRuntime();

const SYSTEM_IDS = {
  agent: 'fe096781-5601-53d2-b2f6-0d3403f7e9ca',
  echo: '046b5dc7-2108-582c-9c6c-31d556d138f0',
};

describe('system assistants', () => {
  it('registers one per graph with the official UUIDv5 ids', async () => {
    const found = await rt.client.assistants.search({
      metadata: { created_by: 'system' },
      limit: 100,
    });
    const byGraph = Object.fromEntries(found.map((a) => [a.graph_id, a]));
    expect(Object.keys(byGraph).sort()).toEqual(exampleGraphIds().sort());
    expect(byGraph.agent?.assistant_id).toBe(SYSTEM_IDS.agent);
    expect(byGraph.echo?.assistant_id).toBe(SYSTEM_IDS.echo);
    expect(byGraph.echo).toMatchObject({
      name: 'echo',
      version: 1,
      config: {},
      metadata: { created_by: 'system' },
    });
    expect(byGraph.agent?.description).toBe(
      'A tool-calling agent driven by a deterministic fake chat model',
    );
  });

  it('resolves a graph id to its system assistant', async () => {
    const assistant = await rt.client.assistants.get('echo');
    expect(assistant.assistant_id).toBe(SYSTEM_IDS.echo);
  });
});

describe('assistant lifecycle', () => {
  it('creates, versions, restores and deletes', async () => {
    const created = await rt.client.assistants.create({
      graphId: 'agent',
      name: 'support bot',
      description: 'first',
      config: { configurable: { tone: 'calm' } },
      context: { region: 'eu' },
      metadata: { team: 'a' },
    });
    expect(created).toMatchObject({
      graph_id: 'agent',
      name: 'support bot',
      version: 1,
      metadata: { team: 'a' },
    });
    expect(created.context).toEqual({ region: 'eu' });
    expect(new Date(created.created_at).getTime()).toBeGreaterThan(Date.now() - 60_000);

    const updated = await rt.client.assistants.update(created.assistant_id, {
      name: 'support bot v2',
      metadata: { owner: 'b' },
    });
    expect(updated.version).toBe(2);
    expect(updated.name).toBe('support bot v2');
    expect(updated.metadata).toEqual({ team: 'a', owner: 'b' });
    expect(updated.config).toEqual({ configurable: { tone: 'calm' } });

    const versions = await rt.client.assistants.getVersions(created.assistant_id);
    expect(versions.map((v) => v.version)).toEqual([2, 1]);
    expect(versions[1]?.name).toBe('support bot');

    const restored = await rt.client.assistants.setLatest(created.assistant_id, 1);
    expect(restored).toMatchObject({ version: 1, name: 'support bot', metadata: { team: 'a' } });
    expect((await rt.client.assistants.get(created.assistant_id)).name).toBe('support bot');

    await rt.client.assistants.delete(created.assistant_id);
    await expect(rt.client.assistants.get(created.assistant_id)).rejects.toThrow(/404/);
  });

  it('honours if_exists and rejects duplicates with 409', async () => {
    const id = crypto.randomUUID();
    await rt.client.assistants.create({ graphId: 'echo', assistantId: id, name: 'one' });
    await expect(rt.client.assistants.create({ graphId: 'echo', assistantId: id })).rejects.toThrow(
      /409/,
    );
    const same = await rt.client.assistants.create({
      graphId: 'echo',
      assistantId: id,
      ifExists: 'do_nothing',
      name: 'two',
    });
    expect(same.name).toBe('one');
  });

  it('deletes the threads of an assistant when asked', async () => {
    const a = await rt.client.assistants.create({ graphId: 'echo' });
    const thread = await rt.client.threads.create({ metadata: { assistant_id: a.assistant_id } });
    const other = await rt.client.threads.create({ metadata: { assistant_id: 'someone-else' } });
    await rt.client.assistants.delete(a.assistant_id, { deleteThreads: true });
    await expect(rt.client.threads.get(thread.thread_id)).rejects.toThrow(/404/);
    expect((await rt.client.threads.get(other.thread_id)).thread_id).toBe(other.thread_id);
  });
});

describe('assistant search and count', () => {
  it('filters, sorts, pages and selects fields', async () => {
    const tag = crypto.randomUUID();
    for (const name of ['Gamma', 'alpha', 'Beta']) {
      await rt.client.assistants.create({ graphId: 'echo', name, metadata: { tag } });
    }
    const byName = await rt.client.assistants.search({
      metadata: { tag },
      sortBy: 'name',
      sortOrder: 'asc',
    });
    expect(byName.map((a) => a.name)).toEqual(['Beta', 'Gamma', 'alpha']);
    const newest = await rt.client.assistants.search({ metadata: { tag }, limit: 2 });
    expect(newest.map((a) => a.name)).toEqual(['Beta', 'alpha']);
    const rest = await rt.client.assistants.search({ metadata: { tag }, limit: 2, offset: 2 });
    expect(rest.map((a) => a.name)).toEqual(['Gamma']);
    const named = await rt.client.assistants.search({ name: 'ALP', metadata: { tag } });
    expect(named.map((a) => a.name)).toEqual(['alpha']);
    const selected = await rt.client.assistants.search({
      metadata: { tag },
      select: ['assistant_id', 'name'],
      limit: 1,
    });
    expect(Object.keys(selected[0] ?? {}).sort()).toEqual(['assistant_id', 'name']);
    expect(await rt.client.assistants.count({ metadata: { tag } })).toBe(3);
    expect(await rt.client.assistants.count({ graphId: 'interrupt' })).toBe(1);

    const paged = await rt.client.assistants.search({
      metadata: { tag },
      limit: 2,
      includePagination: true,
    });
    expect(paged.assistants).toHaveLength(2);
    expect(paged.next).toBe('2');
  });

  it('returns each assistant exactly as a get does, timestamps included, in time order', async () => {
    const tag = crypto.randomUUID();
    for (const name of ['one', 'two', 'three'])
      await rt.client.assistants.create({ graphId: 'echo', name, metadata: { tag } });
    const found = await rt.client.assistants.search({ metadata: { tag }, sortBy: 'created_at' });
    for (const assistant of found) {
      expect(assistant).toEqual(await rt.client.assistants.get(assistant.assistant_id));
      expect(assistant.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    expect(found.map((a) => a.name)).toEqual(['three', 'two', 'one']);
    const oldest = await rt.client.assistants.search({
      metadata: { tag },
      sortBy: 'updated_at',
      sortOrder: 'asc',
    });
    expect(oldest.map((a) => a.name)).toEqual(['one', 'two', 'three']);
  });
});

describe('assistant searches asked together', () => {
  class CountingStore extends AssistantStore {
    searches = 0;
    counts = 0;
    override search(query: Parameters<AssistantStore['search']>[0]) {
      this.searches++;
      return super.search(query);
    }
    override count(filter: Parameters<AssistantStore['count']>[0]) {
      this.counts++;
      return super.count(filter);
    }
  }

  it('share one query per distinct search within a turn, and see every earlier write', async () => {
    const pool = new pg.Pool({ connectionString: rt.db.url, max: 4 });
    try {
      const store = new CountingStore(pool);
      const service = new AssistantService({
        pool,
        store,
        graphs: await GraphRegistry.load(loadLanggraphConfig(EXAMPLES_CONFIG)),
        threads: { deleteThreadsOfAssistant: () => Promise.resolve() },
        logger: createLogger({ level: 'silent' }),
      });
      const tag = crypto.randomUUID();
      await rt.client.assistants.create({ graphId: 'echo', name: 'first', metadata: { tag } });
      const [a, b, c, byName, count] = await Promise.all([
        service.search({ metadata: { tag } }),
        service.search({ metadata: { tag } }),
        service.search({ metadata: { tag } }),
        service.search({ name: 'first', metadata: { tag } }),
        service.count({ metadata: { tag } }),
      ]);
      expect(store.searches).toBe(2);
      expect(store.counts).toBe(1);
      for (const page of [a, b, c, byName]) expect(page.rows.map((r) => r.name)).toEqual(['first']);
      expect(count).toBe(1);

      // The next turn reads again: a write that finished before the search is in its answer.
      await rt.client.assistants.create({ graphId: 'echo', name: 'second', metadata: { tag } });
      const after = await Promise.all([
        service.search({ metadata: { tag } }),
        service.search({ metadata: { tag } }),
      ]);
      expect(store.searches).toBe(3);
      for (const page of after) expect(page.rows.map((r) => r.name)).toEqual(['second', 'first']);
      expect(await service.count({ metadata: { tag } })).toBe(2);
    } finally {
      await pool.end();
    }
  });
});

describe('graph introspection', () => {
  it('draws the graph, with and without xray', async () => {
    const drawing = await rt.client.assistants.getGraph('agent');
    const nodes = drawing.nodes.map((n) => n.id);
    expect(nodes).toEqual(expect.arrayContaining(['__start__', 'model', 'tools', '__end__']));
    expect(drawing.edges).toContainEqual(
      expect.objectContaining({ source: 'tools', target: 'model' }),
    );
    const xray = await rt.client.assistants.getGraph('agent', { xray: true });
    expect(xray.nodes.length).toBeGreaterThanOrEqual(nodes.length);
  });

  it('publishes JSON Schemas derived from the graph', async () => {
    const agent = await rt.client.assistants.getSchemas('agent');
    expect(agent.graph_id).toBe('agent');
    expect(agent.state_schema).toMatchObject({
      type: 'object',
      properties: { messages: { langgraph_type: 'messages' } },
    });
    const interrupt = await rt.client.assistants.getSchemas('interrupt');
    expect(
      Object.keys((interrupt.state_schema as { properties: object }).properties).sort(),
    ).toEqual(['approved', 'messages']);
    expect(await rt.client.assistants.getSubgraphs('agent')).toEqual({});
  });
});

describe('assistant errors', () => {
  it('answers with the right status and detail', async () => {
    const missing = await rt.http(`/assistants/${crypto.randomUUID()}`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ detail: 'Assistant not found' });

    const badGraph = await rt.http('/assistants', { method: 'POST', json: { graph_id: 'nope' } });
    expect(badGraph.status).toBe(404);
    expect(await badGraph.json()).toEqual({ detail: 'Graph "nope" not found' });

    const malformed = await rt.http('/assistants/not-a-uuid');
    expect(malformed.status).toBe(422);
    const body = (await malformed.json()) as {
      detail: { loc: unknown[]; msg: string; type: string }[];
    };
    expect(body.detail[0]?.loc).toEqual(['path', 'assistant_id']);

    const invalid = await rt.http('/assistants/search', { method: 'POST', json: { limit: 'ten' } });
    expect(invalid.status).toBe(422);
    const issues = (await invalid.json()) as { detail: { loc: unknown[]; type: string }[] };
    expect(issues.detail[0]).toMatchObject({ loc: ['body', 'limit'], type: 'invalid_type' });

    const noVersion = await rt.http(`/assistants/${SYSTEM_IDS.echo}/latest`, {
      method: 'POST',
      json: { version: 99 },
    });
    expect(noVersion.status).toBe(404);
    expect(await noVersion.json()).toEqual({ detail: 'Assistant version not found' });

    const badJson = await rt.http('/assistants', {
      method: 'POST',
      body: '{"graph_id":',
      headers: { 'content-type': 'application/json' },
    });
    expect(badJson.status).toBe(422);
  });
});
