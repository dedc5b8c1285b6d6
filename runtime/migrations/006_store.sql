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
-- `part`), normalised to unit length so that cosine similarity is a plain dot product.
-- The npm-shipped PostgreSQL has no pgvector, so vectors are float arrays scored in SQL.
CREATE TABLE store_vectors (
  prefix text COLLATE "C" NOT NULL,
  key text NOT NULL,
  field text NOT NULL,
  part integer NOT NULL,
  embedding double precision[] NOT NULL,
  PRIMARY KEY (prefix, key, field, part),
  FOREIGN KEY (prefix, key) REFERENCES store_items ON DELETE CASCADE
);
