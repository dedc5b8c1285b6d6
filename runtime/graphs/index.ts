export { GraphRegistry, GraphLoadError, type AnyGraph, type GraphEntry } from './registry.js';
export { systemAssistantId } from './assistant-id.js';
export { graphSchemas, graphDrawing, subgraphSchemas, type GraphSchemas } from './introspect.js';
