// The operator's probe and metrics endpoints.
export { OperatorMetrics } from './metrics.js';
export { startProbeServer, type ProbeChecks, type ProbeServer } from './server.js';
