// Kubernetes machinery of the operator: informers, the work queue, leader election, writes.
export {
  Informer,
  objectKey,
  type KubeObject,
  type InformerEvent,
  type ObjectCache,
} from './informer.js';
export { NamespacedInformers, namespacedKindCache } from './namespaced-informers.js';
export { WorkQueue, type WorkQueueOptions } from './workqueue.js';
export { LeaderElector, type LeaderElectionOptions } from './leader.js';
export { KubeWriter, type ResourceRef } from './client.js';
export { describeError, isConflict, isNotFound, statusOf } from './errors.js';
export { reuseConnections } from './keep-alive.js';
