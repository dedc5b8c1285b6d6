-- The serialised latest state of a thread, and the key it was computed for (graph fingerprint,
-- latest root checkpoint id, its pending-write count). A read whose key differs recomputes.
ALTER TABLE threads ADD COLUMN state_cache jsonb, ADD COLUMN state_cache_key text;

-- Metadata filters are the common search: with the default pending list, rows inserted since the
-- last vacuum are scanned linearly by every search, so latency grew with recent inserts.
ALTER INDEX threads_metadata_idx SET (fastupdate = off);
ALTER INDEX assistants_metadata_idx SET (fastupdate = off);
