// What a request may carry before any work is done with it (limits in common/json): bodies no
// deeper than MAX_JSON_DEPTH, and strings PostgreSQL can store everywhere except in the values
// a graph sees (run input, state, store values...), which are stored encoded and come back
// unchanged (common/db/jsonb.ts). Anything else holding NUL or a lone surrogate (metadata, names,
// ids, keys, filters) is a 422 naming the field, not a database error.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, type ValidationIssue } from '../../common/errors/index.js';
import { MAX_JSON_DEPTH } from '../../common/limits/index.js';
import {
  jsonDepthExceeds,
  mayHoldUnstorable,
  unstorableStrings,
  type CarriedFields,
} from '../../common/json/index.js';

// `{}` inside a carried member: checked all the same. Node names (`goto`) and the checkpoint
// address in `configurable` end up in text columns.
const COMMAND: CarriedFields = { '*': true, goto: {} };
const CONFIG: CarriedFields = {
  '*': true,
  configurable: { '*': true, thread_id: {}, checkpoint_id: {}, checkpoint_ns: {} },
};
const RUN: CarriedFields = { input: true, command: COMMAND, config: CONFIG, context: true };
const SUPERSTEPS: CarriedFields = {
  supersteps: { '*': { updates: { '*': { values: true, command: COMMAND } } } },
};

/** Body members that reach a graph (or the store) as they are, by route (without the prefix). */
const CARRIED: Record<string, CarriedFields> = {
  'POST /threads': SUPERSTEPS,
  'POST /threads/:thread_id/state': { values: true },
  'POST /threads/:thread_id/runs': RUN,
  'POST /threads/:thread_id/runs/wait': RUN,
  'POST /threads/:thread_id/runs/stream': RUN,
  'POST /runs': RUN,
  'POST /runs/wait': RUN,
  'POST /runs/stream': RUN,
  'POST /runs/batch': { '*': RUN },
  'POST /runs/crons': RUN,
  'POST /threads/:thread_id/runs/crons': RUN,
  'PATCH /runs/crons/:cron_id': RUN,
  'POST /assistants': { config: CONFIG, context: true },
  'PATCH /assistants/:assistant_id': { config: CONFIG, context: true },
  'PUT /store/items': { value: true },
};

/** Requests whose body text may hold an unstorable string (see `mayHoldUnstorable`). */
const suspect = new WeakSet<object>();

function tooDeep(): AppError {
  return new AppError('VALIDATION', [
    {
      loc: ['body'],
      msg: `JSON nests deeper than ${MAX_JSON_DEPTH} levels of arrays and objects`,
      type: 'json_too_deep',
    },
  ]);
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
