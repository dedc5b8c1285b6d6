// The MCP methods over the API itself: like the official server, each call goes through the
// HTTP routes with the caller's headers (a loopback, in process), so authentication, the
// project's `on` handlers and their filters apply exactly as they do to the caller's own requests.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../../common/logging/index.js';
import { mcpSdk } from './sdk.js';
import { toolName, toolOf, uniqueByToolName, type Tool, type ToolAssistant } from './tools.js';

/** One request to this server's own API (path without the mount prefix). */
export type Loopback = (call: {
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  headers: Record<string, string>;
}) => Promise<{ status: number; body: unknown }>;

/** Tools per `tools/list` page, as on the official server. */
const PAGE = 100;
/** Assistants searched for the one a `tools/call` names: the search's largest page. */
const MAX_ASSISTANTS = 1000;

export class McpService {
  constructor(
    private readonly loopback: Loopback,
    private readonly logger: Logger,
  ) {}

  private async call(
    headers: Record<string, string>,
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
  ): Promise<unknown> {
    const res = await this.loopback({
      method,
      path,
      headers,
      ...(body === undefined ? {} : { body }),
    });
    if (res.status >= 200 && res.status < 300) return res.body;
    const detail = (res.body as { detail?: unknown } | null)?.detail;
    const { McpError, ErrorCode } = await mcpSdk();
    throw new McpError(
      ErrorCode.InternalError,
      `${method} ${path} answered ${res.status}${typeof detail === 'string' ? `: ${detail}` : ''}`,
    );
  }

  private search(headers: Record<string, string>, offset: number, limit: number) {
    return this.call(headers, 'POST', '/assistants/search', { offset, limit }) as Promise<
      ToolAssistant[]
    >;
  }

  /** One page of tools; the cursor is the offset of the next page in the assistant search. */
  async listTools(
    headers: Record<string, string>,
    cursor: string | undefined,
  ): Promise<{ tools: Tool[]; nextCursor?: string }> {
    const offset = Math.max(0, Number.parseInt(cursor ?? '0', 10) || 0);
    const assistants = await this.search(headers, offset, PAGE);
    const { kept, dropped } = uniqueByToolName(assistants);
    for (const a of dropped)
      this.logger.warn(
        { assistant_id: a.assistant_id, name: a.name },
        toolName(a.name)
          ? 'MCP: duplicate tool name, assistant not listed'
          : 'MCP: the assistant name leaves no tool name (no ASCII letter or digit), assistant not listed',
      );
    const tools = await Promise.all(
      kept.map(async ({ assistant, name }) => {
        try {
          // A model's client waits on this list: types not read yet are not waited for.
          const schemas = (await this.call(
            { ...headers, 'x-graphdock-schema-types': 'if-ready' },
            'GET',
            `/assistants/${encodeURIComponent(assistant.assistant_id)}/schemas`,
          )) as { input_schema?: unknown };
          return toolOf(assistant, name, schemas.input_schema);
        } catch (err) {
          // One graph whose schema cannot be derived does not hide the others.
          this.logger.warn(
            { err, assistant_id: assistant.assistant_id },
            'MCP: no schema, assistant not listed',
          );
          return undefined;
        }
      }),
    );
    return {
      tools: tools.filter((t) => t !== undefined),
      ...(assistants.length === PAGE ? { nextCursor: String(offset + PAGE) } : {}),
    };
  }

  /** Runs the assistant the tool names (a stateless run) and answers with its output. */
  async callTool(
    headers: Record<string, string>,
    name: string,
    args: Record<string, unknown>,
    context: unknown,
  ): Promise<CallToolResult> {
    const matches = (await this.search(headers, 0, MAX_ASSISTANTS)).filter(
      (a) => uniqueByToolName([a]).kept[0]?.name === name,
    );
    const { McpError, ErrorCode } = await mcpSdk();
    if (matches.length === 0) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    if (matches.length > 1)
      throw new McpError(ErrorCode.InvalidParams, 'Multiple tools found with the same name.');
    const output = await this.call(headers, 'POST', '/runs/wait', {
      assistant_id: matches[0]!.assistant_id,
      input: args,
      ...(context === undefined ? {} : { context }),
    });
    const failed = (output as { __error__?: { error?: unknown; message?: unknown } } | null)
      ?.__error__;
    if (failed) {
      const { message, error } = failed;
      const text =
        typeof message === 'string' ? message : typeof error === 'string' ? error : 'Run failed';
      return { isError: true, content: [{ type: 'text', text }] };
    }
    return { content: [{ type: 'text', text: JSON.stringify(output) }] };
  }
}
