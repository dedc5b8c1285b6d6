// What a request may carry before any work is done with it (limits in common/json): bodies no
// deeper than MAX_JSON_DEPTH, and strings PostgreSQL can store everywhere except in the values
// a graph sees (run input, state, store values...), which are stored encoded and come back
// unchanged (common/db/jsonb.ts). Anything else holding NUL or a lone surrogate (metadata, names,
// ids, keys, filters) is a 422 naming the field, not a database error.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, invalid, type ValidationIssue } from '../../common/errors/index.js';
import {
  CARRIED_COMMAND,
  CARRIED_CONFIG,
  CARRIED_PROTOCOL_COMMAND,
  CARRIED_RUN,
  JSON_TOO_DEEP,
  jsonDepthExceeds,
  mayHoldUnstorable,
  unstorableStrings,
  type CarriedFields,
} from '../../common/json/index.js';

const SUPERSTEPS: CarriedFields = {
  supersteps: { '*': { updates: { '*': { values: true, command: CARRIED_COMMAND } } } },
};

/** Body members that reach a graph (or the store) as they are, by route (without the prefix). */
const CARRIED: Record<string, CarriedFields> = {
  'POST /threads': SUPERSTEPS,
  'POST /threads/:thread_id/state': { values: true },
  'POST /threads/:thread_id/commands': CARRIED_PROTOCOL_COMMAND,
  'POST /threads/:thread_id/runs': CARRIED_RUN,
  'POST /threads/:thread_id/runs/wait': CARRIED_RUN,
  'POST /threads/:thread_id/runs/stream': CARRIED_RUN,
  'POST /runs': CARRIED_RUN,
  'POST /runs/wait': CARRIED_RUN,
  'POST /runs/stream': CARRIED_RUN,
  'POST /runs/batch': { '*': CARRIED_RUN },
  'POST /runs/crons': CARRIED_RUN,
  'POST /threads/:thread_id/runs/crons': CARRIED_RUN,
  'PATCH /runs/crons/:cron_id': CARRIED_RUN,
  'POST /assistants': { config: CARRIED_CONFIG, context: true },
  'PATCH /assistants/:assistant_id': { config: CARRIED_CONFIG, context: true },
  'PUT /store/items': { value: true },
};

/** Requests whose body text may hold an unstorable string (see `mayHoldUnstorable`). */
const suspect = new WeakSet<object>();

function tooDeep(): AppError {
  return invalid(['body'], JSON_TOO_DEEP, 'json_too_deep');
}

/**
 * The body parser: bodies are JSON whatever the declared content type (the official server does
 * not check it). Depth is checked on the text, before parsing.
 */
export function parseJsonBody(
  request: object,
  body: string,
  done: (err: Error | null, value?: unknown) => void,
): void {
  if (body.trim() === '') return done(null, undefined);
  if (jsonDepthExceeds(body)) return done(tooDeep());
  if (mayHoldUnstorable(body)) suspect.add(request);
  try {
    done(null, JSON.parse(body));
  } catch (err) {
    done(err as Error);
  }
}

function stringsIn(values: unknown, where: string): ValidationIssue[] {
  return unstorableStrings(values).map(({ path, msg }) => ({
    loc: [where, ...path],
    msg,
    type: 'string_unstorable',
  }));
}

/** Refuses unstorable strings outside the carried members of the body, in path and query too. */
export function registerStorableStrings(app: FastifyInstance, prefix: string): void {
  app.addHook('preValidation', async (request: FastifyRequest) => {
    const issues = [...stringsIn(request.params, 'path'), ...stringsIn(request.query, 'query')];
    if (suspect.has(request)) {
      const route = `${request.method} ${request.routeOptions.url?.slice(prefix.length) ?? ''}`;
      for (const { path, msg } of unstorableStrings(request.body, CARRIED[route]))
        issues.push({ loc: ['body', ...path], msg, type: 'string_unstorable' });
    }
    if (issues.length) throw new AppError('VALIDATION', issues);
  });
}
