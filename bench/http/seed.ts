// Seeds threads through the public HTTP API with many requests in flight, the same way for every
// server. Any failed request aborts the run: the measurements that follow rely on exact counts.
import { HttpClient } from './load.js';

export interface SeedResult {
  threadIds: string[];
  seconds: number;
  perSec: number;
}

/**
 * Creates `count` threads with `POST /threads`; `body(i)` gives the JSON payload of the i-th
 * (0-based) thread of this batch.
 */
export async function seedThreads(
  baseUrl: string,
  count: number,
  concurrency: number,
  body: (i: number) => unknown,
  label: string,
): Promise<SeedResult> {
  const client = new HttpClient(baseUrl, concurrency);
  const threadIds = new Array<string>(count);
  let nextIndex = 0;
  let done = 0;
  let reported = 0;
  const start = performance.now();
  const worker = async () => {
    for (let i = nextIndex++; i < count; i = nextIndex++) {
      let thread: { thread_id: string };
      try {
        thread = await client.json<{ thread_id: string }>('POST', '/threads', body(i));
      } catch (err) {
        nextIndex = count; // stop the other workers too
        throw err;
      }
      threadIds[i] = thread.thread_id;
      done++;
      if (count >= 10_000 && done - reported >= count / 10) {
        reported = done;
        console.log(`    ${label}: ${done}/${count}`);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, count) }, () => worker()));
  } finally {
    await client.close();
  }
  const seconds = (performance.now() - start) / 1000;
  return { threadIds, seconds, perSec: count / seconds };
}
