// The run events of a run started through the thread protocol: LangGraph's v3 protocol events
// (`streamEvents(..., { version: "v3" })`) as the official JS server sends them. Messages in
// values, updates, tasks and tool outputs get the API's JSON shape, interrupts become
// `input.requested` (once per interrupt), and the root graph's lifecycle is the server's own:
// `running` here, the terminal event from the run's persisted status when its log is read.
import { toJson, type MessageMemo } from '../state/index.js';

type Push = (event: string, data: unknown) => void;
type Json = ReturnType<typeof toJson>;

/** What LangGraph's v3 event stream yields (ProtocolEvent of @langchain/langgraph). */
export interface CoreProtocolEvent {
  method: string;
  params: { namespace: string[]; timestamp: number; node?: string; data: unknown };
}

/** Thread-wide sequence numbers: a protocol run's events start at `index * RUN_SEQ_STRIDE`. */
export const RUN_SEQ_STRIDE = 1_000_000_000;

interface Interrupt {
  id?: string;
  value?: unknown;
}

export class ProtocolEventMapper {
  private readonly memo: MessageMemo = new WeakMap();
  /** Interrupts already announced with `input.requested`. */
  private readonly asked = new Set<string>();
  private lastValues: unknown;
  private interrupted = false;

  constructor(
    private readonly push: Push,
    private readonly graphName: string,
  ) {}

  /** The root `running` event; `index` places the run's events in the thread's sequence. */
  start(index: number): void {
    this.push('lifecycle', {
      namespace: [],
      timestamp: Date.now(),
      data: { event: 'running', graph_name: this.graphName },
      index,
    });
  }

  event(event: CoreProtocolEvent): void {
    const { namespace, timestamp, node, data } = event.params;
    const root = namespace.length === 0;
    switch (event.method) {
      case 'lifecycle':
        // The root's lifecycle is the server's: its status is the run's, known once it settled.
        if (!root) this.push('lifecycle', { namespace, timestamp, data: toJson(data) });
        return;
      case 'values': {
        const values = data as Record<string, unknown> | null;
        if (values && typeof values === 'object' && '__interrupt__' in values) {
          this.ask(namespace, timestamp, values.__interrupt__);
          if (root) this.interrupted = true;
          const rest = { ...values };
          delete rest.__interrupt__;
          if (Object.keys(rest).length)
            this.push('values', { namespace, timestamp, data: toJson(rest, this.memo) });
          return;
        }
        if (root) this.lastValues = values;
        if (values && typeof values === 'object' && !Object.keys(values).length) return;
        this.push('values', { namespace, timestamp, data: toJson(values, this.memo) });
        return;
      }
      case 'updates': {
        const update = data as { node?: string; values?: unknown };
        if (update.node === '__interrupt__') {
          this.ask(namespace, timestamp, update.values);
          return;
        }
        this.push('updates', {
          namespace,
          timestamp,
          ...(update.node ? { node: update.node } : {}),
          data: toJson(update.values, this.memo),
        });
        return;
      }
      default:
        this.push(event.method, {
          namespace,
          timestamp,
          ...(node ? { node } : {}),
          data: toJson(data, this.memo),
        });
    }
  }

  private ask(namespace: string[], timestamp: number, interrupts: unknown): void {
    for (const interrupt of (Array.isArray(interrupts) ? interrupts : []) as Interrupt[]) {
      const id = interrupt?.id;
      if (!id || this.asked.has(id)) continue;
      this.asked.add(id);
      this.push('input.requested', {
        namespace,
        timestamp,
        data: { interrupt_id: id, payload: toJson(interrupt.value ?? null) },
      });
    }
  }

  /** The root's final values when the run ran to its end (see StreamEventMapper.finalValues). */
  finalValues(): Json | undefined {
    if (this.interrupted || this.lastValues === undefined) return undefined;
    return toJson(this.lastValues, this.memo);
  }
}
