export {
  GraphRegistry,
  GraphLoadError,
  accessRuntime,
  executionRuntime,
  type AnyGraph,
  type GraphAccessContext,
  type GraphEntry,
  type ServerRuntime,
} from './registry.js';
export { systemAssistantId } from './assistant-id.js';
export {
  graphSchemas,
  graphDrawing,
  runtimeSchemas,
  subgraphSchemas,
  type GraphSchemas,
} from './introspect.js';
export { TypedSchemaResolver, schemaTimeoutFrom, type TypedSchemas } from './typed-schemas.js';
export { registerSdkLogger } from './sdk-logger.js';
export { CommandGoto, CommandInput, CommandUpdate, toGraphCommand } from './command.js';
export { GraphConfig } from './run-config.js';
