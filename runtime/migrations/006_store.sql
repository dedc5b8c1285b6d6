-- The long-term memory store: JSON documents addressed by (namespace, key).
-- `prefix` is the namespace joined with '.' (labels never contain '.'), in byte order ("C"
-- collation) so that a namespace-prefix search is a range scan of the primary key.
CREATE TABLE store_items (
  prefix text COLLATE "C" NOT NULL,
  key text NOT NULL,
  namespace text[] NOT NULL,
  value jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  ttl_minutes double precision,
  expires_at timestamptz,
  PRIMARY KEY (prefix, key)
);
CREATE INDEX store_items_expires_at_idx ON store_items (expires_at) WHERE expires_at IS NOT NULL;

-- One embedding per indexed text of an item (a field path can yield several texts, numbered by
-- `part`), normalised to unit length. The npm-shipped PostgreSQL has no pgvector; vectors are
-- kept as slices in the `cube` contrib extension (trusted: a database owner may create it) and
-- scored by distance (runtime/store/vectors.ts explains the arithmetic).
CREATE EXTENSION IF NOT EXISTS cube;

CREATE TABLE store_vectors (
  prefix text COLLATE "C" NOT NULL,
  key text NOT NULL,
  field text NOT NULL,
  part integer NOT NULL,
  embedding cube[] NOT NULL,
  -- |embedding|²: 1, or 0 for a zero vector
  norm2 double precision NOT NULL,
  PRIMARY KEY (prefix, key, field, part),
  FOREIGN KEY (prefix, key) REFERENCES store_items ON DELETE CASCADE
);
