// The leader's heartbeat on the listeners it serves: operator version, last heartbeat, Ready.
import type { Logger } from '../../common/logging/index.js';
import { GROUP, LISTENER, VERSION, type ListenerStatus } from '../../common/resources/index.js';
import { describeError, type Informer, type KubeWriter } from '../kube/index.js';
import { mergeConditions } from './conditions.js';
import type { Listener } from './types.js';

export class ListenerHeartbeat {
  constructor(
    private readonly listeners: Informer<Listener>,
    private readonly writer: KubeWriter,
    private readonly computeId: string,
    private readonly operatorVersion: string,
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
          [{ type: 'Ready', status: 'True', reason: 'OperatorConnected', message }],
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
