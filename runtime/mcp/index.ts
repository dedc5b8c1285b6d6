// MCP (`/mcp`): the Streamable HTTP Model Context Protocol endpoint, assistants as tools.
export { mcpRoutes } from './routes.js';
export { McpService, type Loopback } from './service.js';
export { toolInputSchema, toolName, uniqueByToolName } from './tools.js';
