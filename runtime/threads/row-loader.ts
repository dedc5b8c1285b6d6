// Single-thread reads that arrive in the same turn of the event loop share one query.
import DataLoader from 'dataloader';
import { PER_TURN } from '../../common/db/index.js';
import type { ThreadRow, ThreadStore } from './store.js';

export type ThreadRowLoader = DataLoader<string, ThreadRow | undefined>;

/**
 * Under load the server reads several requests per turn of the event loop; each thread read would
 * otherwise pay its own round trip, socket write and statement in PostgreSQL. The batch is sent
 * once the turn's I/O callbacks have run. Nothing is cached: every read starts after its request
 * arrived, so it sees every write committed before it.
 */
export function threadRowLoader(store: Pick<ThreadStore, 'get' | 'getMany'>): ThreadRowLoader {
  return new DataLoader(async (ids) => {
    if (ids.length === 1) return [await store.get(ids[0]!)];
    const byId = new Map((await store.getMany(ids)).map((row) => [row.thread_id, row]));
    // PostgreSQL answers uuids in lower case; a request may spell them in upper case.
    return ids.map((id) => byId.get(id.toLowerCase()));
  }, PER_TURN);
}
