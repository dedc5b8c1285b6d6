// The MCP SDK, loaded by the first `/mcp` request rather than at start: with the
// zod-to-json-schema it brings, about 60 modules an idle runtime would otherwise hold.
import type * as server from '@modelcontextprotocol/sdk/server/index.js';
import type * as transport from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type * as types from '@modelcontextprotocol/sdk/types.js';

type Sdk = typeof server & typeof transport & typeof types;

let loading: Promise<Sdk> | undefined;

export function mcpSdk(): Promise<Sdk> {
  loading ??= Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]).then(([server, transport, types]) => ({ ...server, ...transport, ...types }));
  return loading;
}
