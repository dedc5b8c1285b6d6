-- A run's events are written once and sent back as they were written: nothing queries inside
-- them. As `json` they are stored as the text that arrived, instead of being converted to
-- `jsonb` and back; a `values` event repeats the thread's whole history, so this is most of
-- what finishing a run writes. Stored uncompressed: the log lives for minutes, and compressing
-- it cost more CPU than the bytes it saved.
ALTER TABLE run_events ALTER COLUMN data TYPE json USING data::json;
ALTER TABLE run_events ALTER COLUMN data SET STORAGE EXTERNAL;
