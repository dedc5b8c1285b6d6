-- Owner-scoped thread searches: an auth handler's `{ owner: user.identity }` (the official
-- pattern) filters every search of a user. The GIN index on metadata finds an owner's threads
-- but not in order, so a page of the newest meant collecting and sorting all of them; this
-- index walks one owner's threads newest first and stops at the page, as an unfiltered search
-- walks threads_created_at_idx. The store turns a scalar `owner` into an equality on this
-- expression (runtime/threads/store.ts, metadataConditions). Threads without an owner add a
-- NULL entry.
CREATE INDEX threads_owner_idx ON threads ((metadata -> 'owner'), created_at, thread_id);
