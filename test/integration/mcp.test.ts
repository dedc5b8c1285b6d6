// The MCP endpoint (`/mcp`) through the official MCP SDK client: assistants as tools with their
// graphs' input schemas, a tool call that runs the graph, custom auth as on the rest of the API,
// and `http.disable_mcp`.
import { join } from 'node:path';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client } from '@langchain/langgraph-sdk';
import { describe, expect, it } from 'vitest';
import { useRuntime } from '../support/fixture.js';
import { REPO_ROOT } from '../support/server.js';

const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'mcp');

async function connect(url: string, headers: Record<string, string> = {}): Promise<McpClient> {
  const client = new McpClient({ name: 'graphdock-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }),
  );
  return client;
}

describe('MCP endpoint', () => {
  const rt = useRuntime({ config: join(FIXTURES, 'langgraph.json') });

  it('lists each assistant as a tool with its graph input schema', async () => {
    const mcp = await connect(rt.url);
    try {
      const { tools } = await mcp.listTools();
      const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
      expect(Object.keys(byName).sort()).toEqual(['adder', 'echo', 'failing']);
      expect(byName.adder).toMatchObject({
        title: 'adder',
        description: 'Adds two numbers',
        inputSchema: {
          type: 'object',
          properties: { a: { type: 'number' }, b: { type: 'number' } },
        },
      });
      expect(byName.adder!.inputSchema.properties).not.toHaveProperty('sum');
      // A message list is asked of a model as one string, as on the official server.
      expect(byName.echo!.inputSchema.properties).toMatchObject({ messages: { type: 'string' } });
      expect(byName.echo!.description).toBe('Tool based on the echo assistant');
    } finally {
      await mcp.close();
    }
  });

  it('runs the graph for a tool call and answers with its output', async () => {
    const mcp = await connect(rt.url);
    try {
      const result = await mcp.callTool({ name: 'adder', arguments: { a: 2, b: 40 } });
      expect(result.isError).toBeFalsy();
      // The run's output (its final values), as JSON text.
      const text = (result.content as Array<{ type: string; text: string }>)[0]!;
      expect(text.type).toBe('text');
      expect(JSON.parse(text.text)).toMatchObject({ sum: 42 });

      const echoed = await mcp.callTool({ name: 'echo', arguments: { messages: 'hello' } });
      expect((echoed.content as Array<{ text: string }>)[0]!.text).toContain('echo: hello');

      const failed = await mcp.callTool({ name: 'failing', arguments: { messages: 'x' } });
      expect(failed.isError).toBe(true);
      expect((failed.content as Array<{ text: string }>)[0]!.text).toContain('the model is down');

      await expect(mcp.callTool({ name: 'nobody', arguments: {} })).rejects.toThrow(
        /Unknown tool: nobody/,
      );
    } finally {
      await mcp.close();
    }
  });

  it('leaves out an assistant whose name gives no tool name, rather than list a nameless tool', async () => {
    const made = await Promise.all(
      ['', '助手', '!!!'].map((name) => rt.client.assistants.create({ graphId: 'echo', name })),
    );
    const mcp = await connect(rt.url);
    try {
      const { tools } = await mcp.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(['adder', 'echo', 'failing']);
      await expect(mcp.callTool({ name: '', arguments: {} })).rejects.toThrow(/Unknown tool/);
    } finally {
      await mcp.close();
      await Promise.all(made.map((a) => rt.client.assistants.delete(a.assistant_id)));
    }
  });

  it('refuses a body nested past the limit before parsing it, as JSON-RPC', async () => {
    const deep = `${'['.repeat(600)}${']'.repeat(600)}`;
    const res = await fetch(`${rt.url}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"x":${deep}}}}`,
    });
    expect(res.status).toBe(400);
    const answer = (await res.json()) as { id: unknown; error: { code: number; message: string } };
    expect(answer.id).toBeNull();
    expect(answer.error.code).toBe(-32600);
    expect(answer.error.message).toContain('deeper than 512');
  });

  it('keeps no sessions: GET is 405 and DELETE 404', async () => {
    expect((await rt.http('/mcp')).status).toBe(405);
    expect((await rt.http('/mcp', { method: 'DELETE' })).status).toBe(404);
  });
});

describe('MCP endpoint with custom auth', () => {
  const rt = useRuntime({ config: join(FIXTURES, 'auth.json') });
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

  it('authenticates the caller and lists and runs only what its filters let it see', async () => {
    await expect(connect(rt.url)).rejects.toThrow(/401|Invalid or missing token/);

    const alice = new Client({ apiUrl: rt.url, defaultHeaders: bearer('token-alice') });
    await alice.assistants.create({ graphId: 'adder', name: 'Alice adder' });

    const asAlice = await connect(rt.url, bearer('token-alice'));
    const asBob = await connect(rt.url, bearer('token-bob'));
    try {
      // The auth fixture filters assistant searches by owner: system assistants have none.
      expect((await asAlice.listTools()).tools.map((t) => t.name)).toEqual(['Alice_adder']);
      expect((await asBob.listTools()).tools).toEqual([]);
      const sum = await asAlice.callTool({ name: 'Alice_adder', arguments: { a: 1, b: 2 } });
      expect(JSON.parse((sum.content as Array<{ text: string }>)[0]!.text)).toMatchObject({
        sum: 3,
      });
      await expect(
        asBob.callTool({ name: 'Alice_adder', arguments: { a: 1, b: 2 } }),
      ).rejects.toThrow(/Unknown tool/);
    } finally {
      await asAlice.close();
      await asBob.close();
    }
  });
});

describe('http.disable_mcp', () => {
  const rt = useRuntime({ config: join(FIXTURES, 'disabled.json') });

  it('answers 404 on /mcp and the client cannot connect', async () => {
    const res = await rt.http('/mcp', {
      method: 'POST',
      headers: { accept: 'application/json, text/event-stream' },
      json: { jsonrpc: '2.0', id: 1, method: 'ping' },
    });
    expect(res.status).toBe(404);
    await expect(connect(rt.url)).rejects.toThrow();
  });
});
