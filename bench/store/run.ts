// Cost of semantic search without pgvector: vectors are `cube` slices scored by distance in SQL
// (runtime/store/vectors.ts), an exact scan of every candidate under the namespace prefix. Measured against the same
// store's plain prefix search (newest first) over the same items, in the same run.
//
//   npx tsx bench/store/run.ts -- [--items 10000] [--dims 16,256,1536] [--repeats 15]
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createPool, startPostgresServer } from '../../common/db/index.js';
import { migrateRuntimeDatabase } from '../../runtime/index.js';
import { ItemStore } from '../../runtime/store/index.js';

const { values } = parseArgs({
  options: {
    items: { type: 'string', default: '10000' },
    dims: { type: 'string', default: '16,256,1536' },
    repeats: { type: 'string', default: '15' },
  },
});
const items = Number(values.items);
const dimsList = values.dims.split(',').map(Number);
const repeats = Number(values.repeats);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

const dataDir = mkdtempSync(join(tmpdir(), 'gd-bench-store-'));
const pg = await startPostgresServer({ dataDir, ephemeral: true });
const pool = createPool({ url: pg.url, max: 4 });
// Stopping PostgreSQL at the end closes idle connections under the pool: expected, not a failure.
pool.on('error', () => undefined);
try {
  await migrateRuntimeDatabase(pool);
  const store = new ItemStore(pool);
  console.log(`items=${items} repeats=${repeats} cpus=${cpus().length}`);
  for (const dims of dimsList) {
    await pool.query('TRUNCATE store_items CASCADE');
    // One item per key, written straight into the tables.
    await pool.query(
      `INSERT INTO store_items (prefix, key, namespace, value)
       SELECT 'bench.docs', 'k' || i, ARRAY['bench', 'docs'], jsonb_build_object('n', i)
       FROM generate_series(1, $1) AS i`,
      [items],
    );
    // Random unit vectors, cut into the store's 100-dimension `cube` slices.
    await pool.query(
      `INSERT INTO store_vectors (prefix, key, field, part, embedding, norm2)
       SELECT 'bench.docs', 'k' || i, '$', 0,
              ARRAY(SELECT cube(e[s * 100 + 1 : least(s * 100 + 100, $2)])
                    FROM generate_series(0, (($2 - 1) / 100)) AS s), 1
       FROM (SELECT i, ARRAY(SELECT x / norm FROM unnest(raw) AS x) AS e
             FROM (SELECT i, raw, sqrt((SELECT sum(y * y) FROM unnest(raw) AS y)) AS norm
                   FROM (SELECT i, ARRAY(SELECT random() - 0.5 + 0 * i FROM generate_series(1, $2)) AS raw
                         FROM generate_series(1, $1) AS i) AS r) AS n) AS u`,
      [items, dims],
    );
    await pool.query('VACUUM ANALYZE store_items');
    await pool.query('VACUUM ANALYZE store_vectors');
    const raw = Array.from({ length: dims }, () => Math.random() - 0.5);
    const norm = Math.sqrt(raw.reduce((s, x) => s + x * x, 0));
    const vector = raw.map((x) => x / norm);
    const query = (withVector: boolean) =>
      store.search({
        prefix: ['bench'],
        conditions: [],
        limit: 10,
        offset: 0,
        vector: withVector ? vector : undefined,
        refresh: false,
      });
    await query(true);
    await query(false);
    const plain: number[] = [];
    const semantic: number[] = [];
    // Alternating, so drift of the machine's speed hits both alike.
    for (let i = 0; i < repeats; i++) {
      plain.push(await timed(() => query(false)));
      semantic.push(await timed(() => query(true)));
    }
    const [p, s] = [median(plain), median(semantic)];
    console.log(
      `dims=${dims}: prefix search p50 ${p.toFixed(1)} ms, semantic search p50 ${s.toFixed(1)} ms, ratio ${(s / p).toFixed(1)}x, ${((s * 1000) / items).toFixed(2)} µs per candidate`,
    );
  }
} finally {
  await pool.end();
  await pg.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
