// Preloaded into the server by bench/protocol/profile.ts (`--import`): counts the statements its
// pg clients send, by text. SIGUSR2 writes the counts since the last signal to the file named by
// GRAPHDOCK_QUERY_COUNTS and starts again.
import { writeFileSync } from 'node:fs';
import pg from 'pg';

const counts = new Map();
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (...args) {
  const q = args[0];
  const text = typeof q === 'string' ? q : `${q?.name ? `[${q.name}] ` : ''}${q?.text ?? ''}`;
  const key = text.replace(/\s+/g, ' ').slice(0, 140);
  counts.set(key, (counts.get(key) ?? 0) + 1);
  return query.apply(this, args);
};
process.on('SIGUSR2', () => {
  const file = process.env.GRAPHDOCK_QUERY_COUNTS;
  if (file) writeFileSync(file, JSON.stringify([...counts].sort((a, b) => b[1] - a[1])));
  counts.clear();
});
