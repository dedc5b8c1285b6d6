// A closed-loop HTTP load generator: N workers, each sending its next request as soon as the
// previous one has been answered. Latency goes into an HDR histogram; every response is checked.
import { createHistogram } from 'node:perf_hooks';
import { Pool } from 'undici';

export interface HttpResponse {
  status: number;
  body: string;
}

/**
 * Keep-alive HTTP/1.1 client for one base URL, with at most `connections` connections. undici
 * costs the generator a fraction of what `node:http` does; on two shared cores every cycle the
 * generator spends is taken from the server under test.
 */
export class HttpClient {
  private readonly pool: Pool;

  /** `headers`: sent with every request (e.g. a bearer token). */
  constructor(
    readonly baseUrl: string,
    connections: number,
    private readonly headers: Record<string, string> = {},
  ) {
    this.pool = new Pool(baseUrl, {
      connections,
      pipelining: 1,
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
  }

  async request(method: string, path: string, body?: string): Promise<HttpResponse> {
    const res = await this.pool.request({
      method: method,
      path,
      headers:
        body === undefined ? this.headers : { ...this.headers, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body }),
    });
    return { status: res.statusCode, body: await res.body.text() };
  }

  /** Nanoseconds from sending a request to the first body chunk; then reads the body to its end. */
  async firstChunk(method: string, path: string, body?: string): Promise<bigint> {
    const sent = process.hrtime.bigint();
    const res = await this.pool.request({
      method: method,
      path,
      ...(body === undefined ? {} : { body, headers: { 'content-type': 'application/json' } }),
    });
    if (res.statusCode < 200 || res.statusCode >= 300) {
      throw new Error(
        `${method} ${path} -> ${res.statusCode}: ${(await res.body.text()).slice(0, 300)}`,
      );
    }
    let first: bigint | undefined;
    await drain(res.body, () => (first ??= process.hrtime.bigint() - sent));
    if (first === undefined) throw new Error(`${method} ${path}: empty body`);
    return first;
  }

  async json<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.request(
      method,
      path,
      body === undefined ? undefined : JSON.stringify(body),
    );
    if (res.status < 200 || res.status >= 300) {
      throw new Error(`${method} ${path} -> ${res.status}: ${res.body.slice(0, 500)}`);
    }
    return JSON.parse(res.body) as T;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** Reads an async iterable to its end, calling `onChunk` for each chunk. */
export async function drain(source: AsyncIterable<unknown>, onChunk?: () => void): Promise<number> {
  let chunks = 0;
  for await (const chunk of source) {
    chunks += chunk === undefined ? 0 : 1;
    onChunk?.();
  }
  return chunks;
}

export interface RequestSpec {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  /** Returns a description of what is wrong with a 2xx answer, or undefined when it is right. */
  check?: (body: string) => string | undefined;
}

export interface LoadOptions {
  concurrency: number;
  warmupMs: number;
  durationMs: number;
  /** Measured windows per operation; the median window is reported (this VM is noisy). */
  repeats: number;
}

export interface LoadResult {
  /** Requests answered correctly during the measured window. */
  ok: number;
  errors: number;
  firstError?: string;
  elapsedMs: number;
  opsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  maxMs: number;
  /** CPU used by this (load generator) process, in percent of one core. */
  generatorCpuPct: number;
  /** ops/s of every measured window, in the order they ran. */
  windows?: number[];
}

/** One window: a warm-up (`record` false, `warmupMs` long) or a measured one (`durationMs`). */
export function runWindow(
  client: HttpClient,
  next: (worker: number) => RequestSpec,
  options: LoadOptions,
  record: boolean,
): Promise<LoadResult> {
  return loop(
    client,
    next,
    options.concurrency,
    record ? options.durationMs : options.warmupMs,
    record,
  );
}

/** The median window by throughput stands for the operation; errors from every window count. */
export function summarize(windows: LoadResult[]): LoadResult {
  const median = [...windows].sort((a, b) => a.opsPerSec - b.opsPerSec)[
    Math.floor(windows.length / 2)
  ];
  if (!median) throw new Error('no measured window');
  const errors = windows.reduce((sum, w) => sum + w.errors, 0);
  const firstError = windows.find((w) => w.firstError !== undefined)?.firstError;
  return {
    ...median,
    errors,
    ...(firstError === undefined ? {} : { firstError }),
    windows: windows.map((w) => Math.round(w.opsPerSec)),
  };
}

function loop(
  client: HttpClient,
  next: (worker: number) => RequestSpec,
  concurrency: number,
  durationMs: number,
  record: boolean,
): Promise<LoadResult> {
  return measureTasks(
    async (index) => {
      const spec = next(index);
      const res = await client.request(spec.method, spec.path, spec.body);
      if (res.status < 200 || res.status >= 300)
        throw new Error(`${spec.method} ${spec.path} -> ${res.status}: ${res.body.slice(0, 300)}`);
      const problem = spec.check?.(res.body);
      if (problem !== undefined) throw new Error(`${spec.method} ${spec.path}: ${problem}`);
    },
    { concurrency, durationMs, record },
  );
}

/**
 * A closed loop of any task: `concurrency` workers, each starting its next task when the last
 * one ended, for `durationMs`. A task that throws counts as an error; one that returns a number
 * of nanoseconds reports that as its latency (e.g. time to a first byte) instead of its duration.
 */
export async function measureTasks(
  task: (worker: number) => Promise<bigint | void>,
  options: { concurrency: number; durationMs: number; record: boolean },
): Promise<LoadResult> {
  const histogram = createHistogram();
  let ok = 0;
  let errors = 0;
  let firstError: string | undefined;
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  const deadline = start + options.durationMs;

  const worker = async (index: number) => {
    while (performance.now() < deadline) {
      const sent = process.hrtime.bigint();
      try {
        const reported = await task(index);
        const took = reported ?? process.hrtime.bigint() - sent;
        ok++;
        if (options.record) histogram.record(took > 0n ? took : 1n);
      } catch (err) {
        errors++;
        firstError ??= err instanceof Error ? err.message : String(err);
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, (_, i) => worker(i)));

  const elapsedMs = performance.now() - start;
  const cpu = process.cpuUsage(cpuBefore);
  const ns = (value: number) => (histogram.count > 0 ? value / 1e6 : 0);
  return {
    ok,
    errors,
    ...(firstError === undefined ? {} : { firstError }),
    elapsedMs: Math.round(elapsedMs),
    opsPerSec: ok / (elapsedMs / 1000),
    p50Ms: ns(histogram.percentile(50)),
    p99Ms: ns(histogram.percentile(99)),
    meanMs: ns(histogram.mean),
    maxMs: ns(histogram.max),
    generatorCpuPct: ((cpu.user + cpu.system) / 1000 / elapsedMs) * 100,
  };
}
