import { Registry, collectDefaultMetrics, Counter, Histogram, Gauge } from 'prom-client';

export { Registry, Counter, Histogram, Gauge };

/** One registry per process, created in the composition root and passed to whoever needs it. */
export function createMetricsRegistry(prefix = 'graphdock_'): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix });
  return registry;
}
