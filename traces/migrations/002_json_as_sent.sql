-- A run's JSON fields are kept as the text that arrived (`json`), not converted to `jsonb`:
-- they are written once, read back whole (the read API, the thread view, bulk export) and only
-- metadata filters look inside them. Converting to `jsonb` on ingest and back to text on every
-- read was most of the CPU of an export's COPY; `json` also keeps the client's key order.
ALTER TABLE trace_runs
  ALTER COLUMN inputs TYPE json USING inputs::json,
  ALTER COLUMN outputs TYPE json USING outputs::json,
  ALTER COLUMN extra TYPE json USING extra::json,
  ALTER COLUMN events TYPE json USING events::json,
  ALTER COLUMN serialized TYPE json USING serialized::json;
