// Reads and writes that arrive in one turn of the event loop, sent together once it ends.
import DataLoader from 'dataloader';

/**
 * DataLoader options for batches of what arrives in one turn of the event loop, sent once its
 * I/O callbacks have run; nothing cached, so every answer is read after its request arrived.
 */
export const PER_TURN = {
  cache: false,
  batchScheduleFn: (dispatch: () => void) => setImmediate(dispatch),
  maxBatchSize: 100,
} as const;

/**
 * `read`, with identical calls made in one turn of the event loop sharing one execution, sent
 * when the turn ends. Under load several clients often ask the same question in one turn (the
 * same assistant list, say); each would otherwise pay its own round trip and statement. Each
 * answer is still read after its request arrived, so it sees every write committed before.
 * Callers share the answer's object and must not change it.
 */
export function sameTurnReads<A, R>(
  read: (args: A) => Promise<R>,
  keyOf: (args: A) => string = (args) => JSON.stringify(args),
): (args: A) => Promise<R> {
  const loader = new DataLoader<A, R, string>(async (batch) => {
    const shared = new Map<string, Promise<R | Error>>();
    return Promise.all(
      batch.map((args) => {
        const key = keyOf(args);
        let answer = shared.get(key);
        if (answer === undefined) {
          // DataLoader rejects a caller whose slot holds an Error.
          answer = read(args).catch((error: unknown) =>
            error instanceof Error ? error : new Error(String(error)),
          );
          shared.set(key, answer);
        }
        return answer;
      }),
    );
  }, PER_TURN);
  return (args) => loader.load(args);
}
