// Thread creations that arrive in the same turn of the event loop share one INSERT.
import DataLoader from 'dataloader';
import { PER_TURN } from '../../common/db/index.js';
import type { NewThread, ThreadRow, ThreadStore } from './store.js';

export type ThreadInsertBatcher = DataLoader<NewThread, ThreadRow | undefined>;

/**
 * Like thread reads (row-loader.ts), each creation would pay its own round trip, socket write,
 * statement and commit; under load several arrive per turn, and one statement inserts them
 * all, with one commit (one WAL flush) for the lot. Each creation is answered once that
 * commit is durable. When two creations in a batch ask for the same id, the first goes in and
 * the others find the id taken, as they would one after the other.
 */
export function threadInsertBatcher(
  store: Pick<ThreadStore, 'insert' | 'insertMany'>,
): ThreadInsertBatcher {
  return new DataLoader(async (threads) => {
    if (threads.length === 1) return [await store.insert(threads[0]!)];
    const firsts = new Map<string, NewThread>();
    for (const thread of threads) {
      const id = thread.thread_id.toLowerCase();
      if (!firsts.has(id)) firsts.set(id, thread);
    }
    let rows: ThreadRow[];
    try {
      rows = await store.insertMany([...firsts.values()]);
    } catch {
      // One creation's failure is not the others': each is tried alone, and fails alone.
      return Promise.all(threads.map((thread) => store.insert(thread).catch((err: Error) => err)));
    }
    const inserted = new Map(rows.map((row) => [row.thread_id, row]));
    return threads.map((thread) => {
      const id = thread.thread_id.toLowerCase();
      return firsts.get(id) === thread ? inserted.get(id) : undefined;
    });
  }, PER_TURN);
}
