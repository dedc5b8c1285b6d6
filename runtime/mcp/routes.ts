// The Streamable HTTP MCP endpoint, stateless as on the official server: each POST is one
// JSON-RPC exchange answered as JSON by a fresh SDK server; GET (a server-sent stream) is 405 and
// DELETE (ending a session) is 404, there being no sessions.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { JSON_TOO_DEEP, jsonDepthExceeds } from '../../common/json/index.js';
import { mcpSdk } from './sdk.js';
import type { McpService } from './service.js';

const tags = ['MCP'];
const none = (description: string) => z.undefined().describe(description);

/** Headers the loopback does not pass on: they describe this request's body and connection. */
const NOT_PASSED = new Set([
  'host',
  'content-length',
  'content-type',
  'accept',
  'connection',
  'transfer-encoding',
]);

function flatHeaders(req: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers))
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

async function serverFor(
  service: McpService,
  version: string,
  headers: Record<string, string>,
): Promise<Server> {
  const { Server, CallToolRequestSchema, ListToolsRequestSchema } = await mcpSdk();
  const caller = Object.fromEntries(
    Object.entries(headers).filter(([k]) => !NOT_PASSED.has(k) && !k.startsWith('mcp-')),
  );
  const server = new Server(
    { name: 'Graphdock', version },
    { capabilities: { tools: { listChanged: false } } },
  );
  server.setRequestHandler(ListToolsRequestSchema, (req) =>
    service.listTools(caller, req.params?.cursor),
  );
  server.setRequestHandler(CallToolRequestSchema, (req) =>
    service.callTool(
      caller,
      req.params.name,
      req.params.arguments ?? {},
      // Not in the MCP schema; the official server reads it too, as the run's context.
      (req.params as { context?: unknown }).context,
    ),
  );
  return server;
}

export function mcpRoutes(service: McpService, version: string): FastifyPluginAsyncZod {
  return async (app) => {
    // The SDK parses the body itself, with JSON-RPC's own parse error.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body));

    app.post(
      '/mcp',
      {
        schema: {
          tags,
          summary: 'MCP Streamable HTTP endpoint (stateless, JSON answers)',
          description:
            'JSON-RPC 2.0: initialize, ping, tools/list (each assistant as a tool, its input schema from its graph), tools/call (a stateless run of that assistant; its output as text).',
          response: {
            200: z.unknown(),
            202: none('Notification or response accepted'),
            // Refused by the SDK's transport: not JSON-RPC, or Accept/Content-Type it cannot serve.
            400: z.unknown(),
            406: z.unknown(),
            415: z.unknown(),
          },
        },
      },
      async (req, reply) => {
        const body = typeof req.body === 'string' ? req.body : '';
        // Refused before parsing, as the HTTP API and A2A do (common/json); the SDK would parse it.
        if (jsonDepthExceeds(body))
          return reply.code(400).send({
            jsonrpc: '2.0',
            id: null,
            error: { code: -32600, message: `Invalid Request: ${JSON_TOO_DEEP}` },
          });
        const headers = flatHeaders(req);
        const server = await serverFor(service, version, headers);
        const { WebStandardStreamableHTTPServerTransport } = await mcpSdk();
        const transport = new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          enableJsonResponse: true,
        });
        await server.connect(transport);
        try {
          const answer = await transport.handleRequest(
            new Request(`http://localhost${req.url}`, {
              method: 'POST',
              headers,
              body,
            }),
          );
          void reply.code(answer.status as 200);
          answer.headers.forEach((value, key) => void reply.header(key, value));
          return reply.send(Buffer.from(await answer.arrayBuffer()));
        } finally {
          await transport.close();
          await server.close();
        }
      },
    );

    app.get(
      '/mcp',
      {
        schema: {
          tags,
          summary: 'Not served: the endpoint keeps no server-sent stream',
          response: { 405: none('No server-sent stream') },
        },
      },
      async (_req, reply) => reply.code(405).header('allow', 'POST, DELETE').send(),
    );

    app.delete(
      '/mcp',
      {
        schema: {
          tags,
          summary: 'Not served: the endpoint keeps no sessions',
          response: { 404: none('No session to end') },
        },
      },
      async (_req, reply) => reply.code(404).send(),
    );
  };
}
