// The leader's heartbeat on the listeners it serves: operator version, last heartbeat, Ready,
// and Degraded when the listener allows namespaces this operator does not watch.
import type { Logger } from '../../common/logging/index.js';
import { GROUP, LISTENER, VERSION, type ListenerStatus } from '../../common/resources/index.js';
import { describeError, type KubeWriter, type ObjectCache } from '../kube/index.js';
import { mergeConditions, type ConditionInput } from './conditions.js';
import type { Listener } from './types.js';

/**
 * The listener's namespaces this operator cannot serve: those outside its watch namespaces
 * (every other namespace when the listener allows all). Empty when it watches everything.
 */
export function unwatchedNamespaces(
  listener: Listener,
  watchNamespaces: readonly string[],
): string[] | 'others' {
  if (!watchNamespaces.length) return [];
  const allowed = listener.spec.compute_config.k8s_namespaces;
  if (!allowed?.length) return 'others';
  return allowed.filter((n) => !watchNamespaces.includes(n));
}

export function degradedCondition(
  listener: Listener,
  watchNamespaces: readonly string[],
): ConditionInput {
  const unwatched = unwatchedNamespaces(listener, watchNamespaces);
  if (unwatched !== 'others' && unwatched.length === 0)
    return {
      type: 'Degraded',
      status: 'False',
      reason: 'AllNamespacesWatched',
      message: 'The operator watches every namespace of this listener',
    };
  const which =
    unwatched === 'others'
      ? 'This listener allows every namespace, but'
      : `Namespaces ${unwatched.join(', ')} of this listener are not watched:`;
  return {
    type: 'Degraded',
    status: 'True',
    reason: 'NamespacesNotWatched',
    message: `${which} the operator watches only ${watchNamespaces.join(', ')} (--watch-namespaces); deployments elsewhere are not reconciled`,
  };
}

export class ListenerHeartbeat {
  constructor(
    private readonly listeners: ObjectCache<Listener>,
    private readonly writer: KubeWriter,
    private readonly computeId: string,
    private readonly operatorVersion: string,
    private readonly watchNamespaces: readonly string[],
    private readonly logger: Logger,
  ) {}

  async beat(): Promise<void> {
    const mine = this.listeners.list().filter((l) => l.spec.compute_id === this.computeId);
    for (const listener of mine) {
      const message = `graphdock operator ${this.operatorVersion} serves compute id ${this.computeId}`;
      const status: ListenerStatus = {
        observedGeneration: listener.metadata.generation,
        operatorVersion: this.operatorVersion,
        lastHeartbeatTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
        conditions: mergeConditions(
          listener.status?.conditions,
          [
            { type: 'Ready', status: 'True', reason: 'OperatorConnected', message },
            degradedCondition(listener, this.watchNamespaces),
          ],
          listener.metadata.generation,
        ),
      };
      try {
        await this.writer.applyStatus(
          {
            group: GROUP,
            version: VERSION,
            plural: LISTENER.plural,
            kind: LISTENER.kind,
            name: listener.metadata.name,
          },
          status,
        );
      } catch (err) {
        this.logger.warn(
          { err: describeError(err), listener: listener.metadata.name },
          'heartbeat failed',
        );
      }
    }
  }
}
