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
export { graphSchemas, graphDrawing, subgraphSchemas, type GraphSchemas } from './introspect.js';
export { registerSdkLogger } from './sdk-logger.js';
