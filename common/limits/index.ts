// Bounds on what clients may send, where PostgreSQL or the process would otherwise fail on it.
// Documented in docs/limits.md; beyond them a request is a 422 naming the field.

/** Arrays and objects may nest this deep in a request body (the body itself is level 1). */
export const MAX_JSON_DEPTH = 512;

/** A thread's or store item's `ttl`, in minutes: 100 years of 365 days. */
export const MAX_TTL_MINUTES = 100 * 365 * 24 * 60;

/** A run's `after_seconds`: the same 100 years. */
export const MAX_DELAY_SECONDS = MAX_TTL_MINUTES * 60;

/** The largest PostgreSQL `integer` (versions, depths). */
export const MAX_INT4 = 2_147_483_647;

/** A request body, and a WebSocket frame of the thread protocol: 25 MiB. */
export const MAX_BODY_BYTES = 25 * 1024 * 1024;
