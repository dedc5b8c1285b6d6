// The operator's Prometheus metrics, named as controller-runtime names them so existing
// dashboards and alerts apply.
import { Counter, Gauge, Histogram, type Registry } from '../../common/metrics/index.js';

export class OperatorMetrics {
  readonly reconcileTotal: Counter<'controller' | 'result'>;
  readonly reconcileErrors: Counter<'controller'>;
  readonly reconcileTime: Histogram<'controller'>;
  readonly queueDepth: Gauge<'name'>;
  readonly queueAdds: Counter<'name'>;
  readonly queueRetries: Counter<'name'>;
  readonly leader: Gauge<'name'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.reconcileTotal = new Counter({
      name: 'controller_runtime_reconcile_total',
      help: 'Total number of reconciliations per controller',
      labelNames: ['controller', 'result'],
      registers,
    });
    this.reconcileErrors = new Counter({
      name: 'controller_runtime_reconcile_errors_total',
      help: 'Total number of reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    });
    this.reconcileTime = new Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Length of time per reconciliation per controller',
      labelNames: ['controller'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.queueDepth = new Gauge({
      name: 'workqueue_depth',
      help: 'Current depth of workqueue',
      labelNames: ['name'],
      registers,
    });
    this.queueAdds = new Counter({
      name: 'workqueue_adds_total',
      help: 'Total number of adds handled by workqueue',
      labelNames: ['name'],
      registers,
    });
    this.queueRetries = new Counter({
      name: 'workqueue_retries_total',
      help: 'Total number of retries handled by workqueue',
      labelNames: ['name'],
      registers,
    });
    this.leader = new Gauge({
      name: 'leader_election_master_status',
      help: '1 while this replica holds the leader-election lease',
      labelNames: ['name'],
      registers,
    });
  }
}
