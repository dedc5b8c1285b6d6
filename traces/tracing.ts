// The runtime's tracing of its graph runs: the official LangChainTracer over a langsmith Client
// whose in-memory queue is bounded, pointed at the user's own LangSmith when they configured
// one, else at Graphdock's trace store (the control plane's ingest, or `graphdock dev` itself).
import { CallbackManager, type Callbacks } from '@langchain/core/callbacks/manager';
import { LangChainTracer } from '@langchain/core/tracers/tracer_langchain';
import { Client, RunTree } from 'langsmith';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Logger } from '../common/logging/index.js';

/** The workspace `graphdock dev` stores its traces under (it has no tenancy). */
export const DEV_TRACES_TENANT = '00000000-0000-0000-0000-000000000000';
const LANGSMITH_CLOUD = 'https://api.smith.langchain.com';
/** How long one batch's request may take before it is abandoned (and counted as failed). */
const SEND_TIMEOUT_MS = 30_000;
/** How long a run's end waits for its presigned feedback URLs. */
const FEEDBACK_TOKEN_TIMEOUT_MS = 5_000;
/** Default bound of the queue of runs waiting to be sent. */
const DEFAULT_QUEUE_BYTES = 64 * 1024 * 1024;

export interface TracingTarget {
  endpoint: string;
  apiKey: string | undefined;
  project: string;
  /** `user`: the user's own LANGSMITH_* settings; `graphdock`: the platform's trace store. */
  source: 'user' | 'graphdock';
}

type Env = Record<string, string | undefined>;

const first = (env: Env, names: string[]) =>
  names.map((n) => env[n]).find((v) => v !== undefined && v !== '');

/**
 * Where the runtime's traces go, or undefined when tracing is off: LANGSMITH_TRACING=false (or
 * its LANGCHAIN_ synonyms) turns it off; the user's LANGSMITH_ENDPOINT, or their API key with
 * LANGSMITH_TRACING=true (LangSmith's cloud), win; else GRAPHDOCK_TRACES_ENDPOINT (set on
 * deployed runtimes), else `fallback` (`graphdock dev`: its own store).
 */
export function resolveTracingTarget(
  env: Env,
  fallback: { endpoint?: string; apiKey?: string; project: string },
): TracingTarget | undefined {
  const flag = first(env, [
    'LANGSMITH_TRACING_V2',
    'LANGCHAIN_TRACING_V2',
    'LANGSMITH_TRACING',
    'LANGCHAIN_TRACING',
  ]);
  if (flag?.toLowerCase() === 'false') return undefined;
  const project =
    first(env, ['LANGSMITH_PROJECT', 'LANGCHAIN_PROJECT']) ??
    first(env, ['GRAPHDOCK_DEPLOYMENT_NAME']) ??
    fallback.project;
  const userEndpoint = first(env, ['LANGSMITH_ENDPOINT', 'LANGCHAIN_ENDPOINT']);
  const userKey = first(env, ['LANGSMITH_API_KEY', 'LANGCHAIN_API_KEY']);
  if (userEndpoint) return { endpoint: userEndpoint, apiKey: userKey, project, source: 'user' };
  if (userKey && flag === 'true')
    return { endpoint: LANGSMITH_CLOUD, apiKey: userKey, project, source: 'user' };
  const platform = first(env, ['GRAPHDOCK_TRACES_ENDPOINT']);
  if (platform)
    return {
      endpoint: platform,
      apiKey: first(env, ['GRAPHDOCK_TRACES_API_KEY']),
      project,
      source: 'graphdock',
    };
  if (fallback.endpoint)
    return { endpoint: fallback.endpoint, apiKey: fallback.apiKey, project, source: 'graphdock' };
  return undefined;
}

/** One queued run operation as the SDK's queue holds it (only its size matters here). */
interface QueueLike {
  items: unknown[];
  sizeBytes: number;
  push(item: unknown): Promise<void>;
}

/**
 * The tracer every graph run gets. Sending happens in the background: a trace endpoint that is
 * down or slow costs a run nothing beyond the bounded queue, whose drops are counted.
 */
/** A run's own tracing settings (`langsmith_tracer` of the run's creation). */
export interface RunTracing {
  project_name?: string | null;
  example_id?: string | null;
  /** The caller's run, when the run was created under a distributed trace. */
  parent?: DistributedParent | undefined;
}

/** What a caller's `langsmith-trace` and `baggage` headers carried (see runs/). */
export interface DistributedParent {
  /** The caller's run as a dotted order, root first. */
  dottedOrder: string;
  project?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
  tags?: string[] | undefined;
}

/** LangChain's tracer, told of a run it did not start (a distributed trace's caller). */
class RunTracer extends LangChainTracer {
  adopt(run: RunTree): void {
    this.runTreeMap.set(run.id, run);
  }
}

export class RuntimeTracing {
  readonly client: Client;

  constructor(
    readonly target: TracingTarget,
    metrics: Registry,
    logger: Logger,
    maxQueueBytes = DEFAULT_QUEUE_BYTES,
  ) {
    const dropped = new Counter({
      name: 'graphdock_trace_runs_dropped_total',
      help: 'Traced run operations dropped because the trace queue was full',
      registers: [metrics],
    });
    const failures = new Counter({
      name: 'graphdock_trace_send_failures_total',
      help: 'Requests to the trace endpoint that failed (network error or error status)',
      registers: [metrics],
    });
    const counting: typeof fetch = async (input, init) => {
      try {
        const response = await fetch(input, init);
        if (!response.ok) failures.inc();
        return response;
      } catch (err) {
        failures.inc();
        throw err;
      }
    };
    this.client = new Client({
      apiUrl: target.endpoint,
      ...(target.apiKey ? { apiKey: target.apiKey } : {}),
      autoBatchTracing: true,
      // Never hold a run's end until its trace is sent.
      blockOnRootRunFinalization: false,
      maxIngestMemoryBytes: maxQueueBytes,
      // The SDK never retries a send that timed out: the batch is gone. An ingest slowed by a
      // busy machine gets 30 s (10 s lost whole traces in a loaded test run); the queue's bound
      // and the send concurrency still cap what a slow endpoint holds.
      timeout_ms: SEND_TIMEOUT_MS,
      fetchImplementation: counting,
    });
    const internals = this.client as unknown as {
      autoBatchQueue: QueueLike;
      multipartStreamingDisabled: boolean;
    };
    // One buffered body per batch (what the SDK itself falls back to): the streamed body writes
    // each part of each run as its own chunk, which showed in the runtime's CPU profile.
    internals.multipartStreamingDisabled = true;
    // The SDK drops a run operation its full queue cannot take (and logs it); count them.
    const queue = internals.autoBatchQueue;
    const push = queue.push.bind(queue);
    queue.push = (item) => {
      const before = queue.items.length;
      const result = push(item);
      if (queue.items.length === before) dropped.inc();
      return result;
    };
    new Gauge({
      name: 'graphdock_trace_queue_bytes',
      help: 'Estimated bytes of traced runs waiting to be sent',
      registers: [metrics],
      collect() {
        this.set(queue.sizeBytes);
      },
    });
    logger.info(
      { endpoint: target.endpoint, project: target.project, source: target.source },
      'tracing graph runs',
    );
  }

  /**
   * The callbacks of one graph run (a tracer per run; the client and its queue are shared). A
   * run's `langsmith_tracer` names another project, or a dataset example, for its trace.
   */
  callbacks(run?: RunTracing): Callbacks {
    const parent = run?.parent;
    const tracer = new RunTracer({
      client: this.client,
      projectName: run?.project_name ?? parent?.project ?? this.target.project,
      ...(run?.example_id ? { exampleId: run.example_id } : {}),
      ...(parent?.metadata ? { metadata: parent.metadata } : {}),
      ...(parent?.tags?.length ? { tags: parent.tags } : {}),
    });
    if (!parent) return [tracer];
    // The graph's root run becomes a child of the caller's: the tracer knows the caller's run
    // (its id, trace and dotted order) and the manager names it as the parent. The caller's run
    // itself is never sent from here.
    const caller = RunTree.fromHeaders({ 'langsmith-trace': parent.dottedOrder });
    if (!caller) return [tracer];
    tracer.adopt(caller);
    return new CallbackManager(caller.id, { handlers: [tracer], inheritableHandlers: [tracer] });
  }

  /**
   * Presigned feedback URLs for a traced run (a run's `feedback_keys`), one per key, from the
   * trace endpoint: anyone holding one records feedback on the run's trace without an API key.
   * Keys whose token could not be made within `timeoutMs` are left out and logged: the run's end
   * waits for them, and the SDK would retry an endpoint that is down for a minute.
   */
  async feedbackUrls(
    runId: string,
    keys: readonly string[],
    logger: Logger,
    timeoutMs = FEEDBACK_TOKEN_TIMEOUT_MS,
  ): Promise<Record<string, string>> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer from the trace endpoint within ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    const tokens = await Promise.allSettled(
      keys.map((key) => Promise.race([this.client.createPresignedFeedbackToken(runId, key), late])),
    );
    clearTimeout(timer);
    const urls: Record<string, string> = {};
    tokens.forEach((token, i) => {
      if (token.status === 'fulfilled') urls[keys[i]!] = token.value.url;
      else logger.warn({ err: token.reason, key: keys[i] }, 'no feedback URL for this key');
    });
    return urls;
  }

  /** Sends what is queued, waiting at most `timeoutMs`. */
  async flush(timeoutMs = 5_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.client.awaitPendingTraceBatches().catch(() => undefined),
      new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs))),
    ]);
    clearTimeout(timer);
  }
}
