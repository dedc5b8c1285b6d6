// Request counts and latency histograms by route template and status.
import type { FastifyInstance } from 'fastify';
import { Counter, Histogram, type Registry } from '../../common/metrics/index.js';

export function registerHttpMetrics(app: FastifyInstance, registry: Registry): void {
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({
    name: 'graphdock_http_requests_total',
    help: 'HTTP requests handled, by method, route template and status code',
    labelNames,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'graphdock_http_request_duration_seconds',
    help: 'HTTP request latency, by method, route template and status code',
    labelNames,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  app.addHook('onResponse', async (request, reply) => {
    const labels = {
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      status: String(reply.statusCode),
    };
    requests.inc(labels);
    duration.observe(labels, reply.elapsedTime / 1000);
  });
}
