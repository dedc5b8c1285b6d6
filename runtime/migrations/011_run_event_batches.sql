-- A run's log, one row per batch of events instead of one per event. A batch is what one
-- statement appends (the events a run produced in one turn, up to a bounded size): a run that
-- streams 200 events in a step wrote 200 rows, each with its index entries and WAL, and its
-- readers read them back one by one. `events` is a JSON array of [seq, event, data], seqs
-- increasing; `first_seq`/`last_seq` bound it. Stored uncompressed, as run_events was (007).
CREATE TABLE run_event_batches (
  run_id uuid NOT NULL,
  first_seq integer NOT NULL,
  last_seq integer NOT NULL,
  events json NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, first_seq)
);
ALTER TABLE run_event_batches ALTER COLUMN events SET STORAGE EXTERNAL;
CREATE INDEX run_event_batches_created_at_idx ON run_event_batches (created_at);
-- run_events stays for now and is still read: replicas of the previous version, running while a
-- rollout replaces them, go on writing it, and the logs already there stay readable until the
-- retention sweep empties it. A later migration drops it. The other way round, a stream served
-- by an old replica does not see events that new ones write here: until the rollout ends, such a
-- stream ends early, and its client resumes (Last-Event-ID) on a new replica.
