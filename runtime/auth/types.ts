// What a project's `Auth` object yields, and what the rest of the runtime needs from it.

/** The user `authenticate` returned, normalised as the official servers do. */
export interface AuthUser {
  identity: string;
  display_name: string;
  permissions: string[];
  is_authenticated: boolean;
  [field: string]: unknown;
}

export interface AuthContext {
  user: AuthUser;
  scopes: string[];
}

/**
 * A handler's filter compiled to one JSON containment pattern: a row is visible when its
 * `metadata @>` the pattern. Stores apply it in SQL, next to the caller's own metadata filter.
 */
export type AuthFilter = Record<string, unknown>;

export type AuthResource = 'threads' | 'assistants' | 'crons' | 'store';

/** Whether a row exists and, if so, whether the filter lets the caller see it. */
export type Visible = 'visible' | 'hidden' | 'missing';

/** Lookups the authorization needs from the stores, all of them filtered in SQL. */
export interface AuthLookups {
  thread(threadId: string, filter: AuthFilter): Promise<Visible>;
  /** The ids among `threadIds` that exist and match. */
  visibleThreads(threadIds: string[], filter: AuthFilter): Promise<string[]>;
  assistant(idOrGraph: string, filter: AuthFilter): Promise<Visible>;
  cron(cronId: string, filter: AuthFilter): Promise<Visible>;
  /** The thread of a run, when the run exists. */
  threadOfRun(runId: string): Promise<string | undefined>;
}

/** What an authorized run carries besides the request: added metadata and the user in config. */
export interface RunAuthExtras {
  metadata: Record<string, unknown>;
  configurable: Record<string, unknown>;
  /** The filter the run's thread must match, when its creation is to check it (not a lookup). */
  threadFilter?: AuthFilter | undefined;
}
