// Which action each API route is, what value its `on` handler sees, and what must be visible to
// the caller before the route runs. Searches and counts hand the filter on to the store's SQL
// (`request.authFilter`); routes naming a thread, run, assistant or cron first ask the store
// whether that row matches the filter (404 when it does not, as for a missing row), except the
// run-creating routes, whose statement that locks the thread applies the filter itself, and the
// reads of one thread's row, state and history, whose own statement applies it the same way.
import type { FastifyRequest } from 'fastify';
import { AppError } from '../../common/errors/index.js';
import type { CustomAuth } from './custom-auth.js';
import type {
  AuthContext,
  AuthFilter,
  AuthLookups,
  AuthResource,
  RunAuthExtras,
  Visible,
} from './types.js';

type Json = Record<string, unknown>;

export class Authz {
  constructor(
    private readonly auth: CustomAuth,
    readonly lookups: AuthLookups,
    readonly context: AuthContext | undefined,
  ) {}

  filter(resource: AuthResource, action: string, value: Json): Promise<AuthFilter | undefined> {
    return this.auth.authorize(this.context, resource, action, value);
  }

  /** Authorizes an action on one thread: 404 when it is hidden (or missing and `mustExist`). */
  async thread(action: string, threadId: string, value: Json, mustExist = false): Promise<void> {
    value.thread_id = threadId;
    const filter = await this.filter('threads', action, value);
    if (filter) notVisible(await this.lookups.thread(threadId, filter), mustExist, 'Thread');
  }

  /** As `thread`, for the thread the run belongs to. */
  async run(action: string, runId: string, value: Json = {}): Promise<void> {
    value.run_id = runId;
    const filter = await this.filter('threads', action, value);
    if (!filter) return;
    const threadId = await this.lookups.threadOfRun(runId.toLowerCase());
    if (threadId === undefined) return;
    if ((await this.lookups.thread(threadId, filter)) !== 'visible') throw missing('Run');
  }

  async assistant(action: string, id: string, value: Json = {}): Promise<void> {
    value.assistant_id = id;
    const filter = await this.filter('assistants', action, value);
    if (filter) notVisible(await this.lookups.assistant(id, filter), false, 'Assistant');
  }

  async cron(action: string, cronId: string, value: Json = {}): Promise<void> {
    value.cron_id = cronId;
    const filter = await this.filter('crons', action, value);
    if (filter) notVisible(await this.lookups.cron(cronId, filter), false, 'Cron');
  }

  /**
   * `threads:create_run`: the handler may add metadata; the run's config carries the user as
   * the official server passes it (`langgraph_auth_user`, `_user_id`, `_permissions`). With
   * `deferThreadCheck`, the thread's visibility is not looked up here: the filter comes back
   * as `threadFilter` for the run's own insert to apply (one statement fewer per run).
   */
  async createRun(
    threadId: string | undefined,
    body: Json,
    deferThreadCheck = false,
  ): Promise<RunAuthExtras> {
    const value: Json = {
      thread_id: threadId,
      assistant_id: body.assistant_id,
      run_id: undefined,
      status: 'pending',
      metadata: { ...(body.metadata ?? {}) },
      prevent_insert_if_inflight: undefined,
      multitask_strategy: body.multitask_strategy ?? 'enqueue',
      if_not_exists: body.if_not_exists ?? 'reject',
      after_seconds: body.after_seconds ?? 0,
      kwargs: body,
    };
    const filter = await this.filter('threads', 'create_run', value);
    const defer = filter !== undefined && threadId !== undefined && deferThreadCheck;
    if (filter && threadId !== undefined && !defer) {
      const seen = await this.lookups.thread(threadId, filter);
      if (seen === 'hidden') throw missing('Thread');
    }
    const configurable: Json = {};
    if (this.context) {
      const { user, scopes } = this.context;
      configurable.langgraph_auth_user = user;
      configurable.langgraph_auth_user_id = user.identity;
      configurable.langgraph_auth_permissions = scopes;
    }
    return {
      metadata: (value.metadata as Json | undefined) ?? {},
      configurable,
      ...(defer ? { threadFilter: filter } : {}),
    };
  }
}

const missing = (what: string) => new AppError('NOT_FOUND', `${what} not found`);

function notVisible(seen: Visible, mustExist: boolean, what: string): void {
  if (seen === 'hidden' || (mustExist && seen === 'missing')) throw missing(what);
}

/** Puts what the handler added into a run body (metadata) and its config (the user). */
export function applyRunExtras(body: Json, extras: RunAuthExtras): void {
  if (Object.keys(extras.metadata).length) body.metadata = extras.metadata;
  const config = (body.config as Json | null | undefined) ?? {};
  body.config = {
    ...config,
    configurable: { ...((config.configurable as Json | undefined) ?? {}), ...extras.configurable },
  };
}

type Rule = (req: FastifyRequest, z: Authz) => Promise<void>;

const bodyOf = (req: FastifyRequest): Json => {
  if (req.body === undefined || req.body === null) req.body = {};
  return req.body as Json;
};
const param = (req: FastifyRequest, name: string) =>
  (req.params as Record<string, string>)[name] ?? '';

/** Lets the handler add metadata: the request's metadata becomes what the handler left. */
async function withMetadata(
  req: FastifyRequest,
  authorize: (value: Json) => Promise<unknown>,
  extra: Json = {},
): Promise<void> {
  const body = bodyOf(req);
  const value: Json = { ...extra, metadata: { ...(body.metadata ?? {}) } };
  await authorize(value);
  if (value.metadata && typeof value.metadata === 'object') body.metadata = value.metadata;
}

const list =
  (resource: AuthResource, keys: string[]): Rule =>
  async (req, z) => {
    const body = bodyOf(req);
    req.authFilter = await z.filter(
      resource,
      'search',
      Object.fromEntries(keys.map((k) => [k, body[k]])),
    );
  };

const threadAction =
  (action: string): Rule =>
  (req, z) =>
    z.thread(action, param(req, 'thread_id'), {});

/**
 * `threads:read` of a route whose own read applies `req.authFilter` (a thread that does not
 * match is not found, as a missing one): no lookup before it. Only for the routes that pass it on.
 */
const readThreadFiltered: Rule = async (req, z) => {
  req.authFilter = await z.filter('threads', 'read', { thread_id: param(req, 'thread_id') });
};

const runOnThread =
  (action: string): Rule =>
  (req, z) =>
    z.thread(action, param(req, 'thread_id'), { run_id: param(req, 'run_id') });

/** The run routes hand `req.authFilter` to the run's creation, which checks the thread. */
const createRunOnThread: Rule = async (req, z) => {
  const body = bodyOf(req);
  const extras = await z.createRun(param(req, 'thread_id'), body, true);
  applyRunExtras(body, extras);
  req.authFilter = extras.threadFilter;
};

const createStatelessRun: Rule = async (req, z) => {
  const body = bodyOf(req);
  applyRunExtras(body, await z.createRun(undefined, body));
};

const assistantAction =
  (action: string): Rule =>
  (req, z) =>
    z.assistant(action, param(req, 'assistant_id'));

/** The store has no metadata to filter on: handlers scope it by rewriting the namespace. */
function storeRule(
  action: string,
  read: (req: FastifyRequest) => Json,
  write: (req: FastifyRequest, namespace: unknown) => void,
): Rule {
  return async (req, z) => {
    const value = read(req);
    const filter = await z.filter('store', action, value);
    if (filter)
      throw new AppError(
        'INTERNAL',
        'Auth handlers on the store cannot return a filter; scope items by changing value.namespace instead',
      );
    write(req, value.namespace);
  };
}

const cronCreate =
  (onThread: boolean): Rule =>
  async (req, z) => {
    const body = bodyOf(req);
    if (onThread) await z.thread('create_run', param(req, 'thread_id'), {}, false);
    await withMetadata(req, (value) => z.filter('crons', 'create', value), {
      payload: body,
      schedule: body.schedule,
      cron_id: undefined,
      thread_id: onThread ? param(req, 'thread_id') : undefined,
      user_id: z.context?.user.identity,
      end_time: body.end_time,
    });
  };

/** The JSON-RPC method decides the action; the body is still text here. */
const a2aRule: Rule = async (req, z) => {
  await z.assistant('read', param(req, 'assistant_id'));
  let call: { method?: unknown; params?: Json } = {};
  try {
    call = JSON.parse(typeof req.body === 'string' ? req.body : '{}') as typeof call;
  } catch {
    return; // the route answers the parse error
  }
  const params = call.params ?? {};
  const message = (params.message ?? {}) as Json;
  switch (call.method) {
    case 'message/send':
    case 'message/stream': {
      if (typeof message.taskId === 'string') await z.run('create_run', message.taskId);
      const contextId = typeof message.contextId === 'string' ? message.contextId : undefined;
      req.authRun = await z.createRun(contextId?.toLowerCase(), {
        assistant_id: param(req, 'assistant_id'),
        if_not_exists: 'create',
      });
      return;
    }
    case 'tasks/get':
    case 'tasks/resubscribe':
      if (typeof params.id === 'string') await z.run('read', params.id);
      return;
    case 'tasks/cancel':
      if (typeof params.id === 'string') await z.run('update', params.id);
      return;
  }
};

/** Keyed by method and route path (without the mount prefix). */
export const RULES: Record<string, Rule> = {
  // Threads
  'POST /threads': async (req, z) => {
    const body = bodyOf(req);
    const threadId = typeof body.thread_id === 'string' ? body.thread_id : undefined;
    let filter: AuthFilter | undefined;
    await withMetadata(
      req,
      async (value) => (filter = await z.filter('threads', 'create', value)),
      { thread_id: threadId, if_exists: body.if_exists },
    );
    // Someone else's thread under the same id is a conflict, never handed over.
    if (filter && threadId && (await z.lookups.thread(threadId, filter)) === 'hidden')
      throw new AppError('CONFLICT', 'Thread already exists');
  },
  'POST /threads/search': list('threads', [
    'metadata',
    'ids',
    'status',
    'values',
    'limit',
    'offset',
  ]),
  'POST /threads/count': list('threads', ['metadata', 'values', 'status']),
  'POST /threads/prune': async (req, z) => {
    const body = bodyOf(req);
    const ids = (body.thread_ids as string[] | undefined) ?? [];
    const filter = await z.filter('threads', 'delete', { thread_ids: ids });
    if (filter) body.thread_ids = await z.lookups.visibleThreads(ids, filter);
  },
  'GET /threads/:thread_id': readThreadFiltered,
  'PATCH /threads/:thread_id': (req, z) =>
    withMetadata(req, (value) => z.thread('update', param(req, 'thread_id'), value)),
  'DELETE /threads/:thread_id': threadAction('delete'),
  'POST /threads/:thread_id/copy': threadAction('read'),
  'GET /threads/:thread_id/state': readThreadFiltered,
  'POST /threads/:thread_id/state': threadAction('update'),
  'GET /threads/:thread_id/state/:checkpoint_id': readThreadFiltered,
  'POST /threads/:thread_id/state/checkpoint': readThreadFiltered,
  'POST /threads/:thread_id/history': readThreadFiltered,
  'GET /threads/:thread_id/history': readThreadFiltered,
  'GET /threads/:thread_id/stream': threadAction('read'),
  // Thread protocol: a command that starts or resumes a run is `create_run`, the rest reads.
  'POST /threads/:thread_id/commands': (req, z) => {
    const method = (req.body as Json | null)?.method;
    const starts = method === 'run.start' || method === 'input.respond';
    return z.thread(starts ? 'create_run' : 'read', param(req, 'thread_id'), {});
  },
  'POST /threads/:thread_id/stream/events': threadAction('read'),
  'GET /threads/:thread_id/stream/events': threadAction('read'),

  // Runs
  'POST /threads/:thread_id/runs': createRunOnThread,
  'POST /threads/:thread_id/runs/wait': createRunOnThread,
  'POST /threads/:thread_id/runs/stream': createRunOnThread,
  'GET /threads/:thread_id/runs': threadAction('read'),
  'GET /threads/:thread_id/runs/:run_id': runOnThread('read'),
  'DELETE /threads/:thread_id/runs/:run_id': runOnThread('delete'),
  'GET /threads/:thread_id/runs/:run_id/join': runOnThread('read'),
  'GET /threads/:thread_id/runs/:run_id/stream': runOnThread('read'),
  'POST /threads/:thread_id/runs/:run_id/cancel': runOnThread('update'),
  'GET /threads/:thread_id/runs/:run_id/webhooks': runOnThread('read'),
  'POST /runs': createStatelessRun,
  'POST /runs/wait': createStatelessRun,
  'POST /runs/stream': createStatelessRun,
  'POST /runs/batch': async (req, z) => {
    for (const body of req.body as Json[]) applyRunExtras(body, await z.createRun(undefined, body));
  },
  'POST /runs/cancel': async (req, z) => {
    const body = bodyOf(req);
    if (typeof body.thread_id === 'string') {
      await z.thread('update', body.thread_id, { run_ids: body.run_ids }, true);
      return;
    }
    // Cancelling by status spans every thread; a filtered caller names its runs instead.
    if (await z.filter('threads', 'update', { status: body.status }))
      throw new AppError(
        'FORBIDDEN',
        'Cancelling runs by status is not allowed with an authorization filter; cancel by thread_id and run_ids',
      );
  },
  'GET /runs/:run_id/stream': (req, z) => z.run('read', param(req, 'run_id')),
  'GET /runs/:run_id/webhooks': (req, z) => z.run('read', param(req, 'run_id')),

  // Crons
  'POST /runs/crons': cronCreate(false),
  'POST /threads/:thread_id/runs/crons': cronCreate(true),
  'POST /runs/crons/search': list('crons', ['assistant_id', 'thread_id', 'limit', 'offset']),
  'POST /runs/crons/count': list('crons', ['assistant_id', 'thread_id']),
  'GET /runs/crons/:cron_id': (req, z) => z.cron('read', param(req, 'cron_id')),
  'PATCH /runs/crons/:cron_id': (req, z) =>
    withMetadata(req, (value) => z.cron('update', param(req, 'cron_id'), value)),
  'DELETE /runs/crons/:cron_id': (req, z) => z.cron('delete', param(req, 'cron_id')),

  // Assistants
  'POST /assistants': async (req, z) => {
    const body = bodyOf(req);
    const id = typeof body.assistant_id === 'string' ? body.assistant_id : undefined;
    let filter: AuthFilter | undefined;
    await withMetadata(
      req,
      async (value) => (filter = await z.filter('assistants', 'create', value)),
      {
        assistant_id: id,
        graph_id: body.graph_id,
        config: body.config,
        context: body.context,
        if_exists: body.if_exists,
        name: body.name,
        description: body.description,
      },
    );
    if (filter && id && (await z.lookups.assistant(id, filter)) === 'hidden')
      throw new AppError('CONFLICT', 'Assistant already exists');
  },
  'POST /assistants/search': list('assistants', ['graph_id', 'metadata', 'limit', 'offset']),
  'POST /assistants/count': list('assistants', ['graph_id', 'metadata']),
  'GET /assistants/:assistant_id': assistantAction('read'),
  'PATCH /assistants/:assistant_id': (req, z) =>
    withMetadata(req, (value) => z.assistant('update', param(req, 'assistant_id'), value)),
  'DELETE /assistants/:assistant_id': assistantAction('delete'),
  'GET /assistants/:assistant_id/graph': assistantAction('read'),
  'GET /assistants/:assistant_id/schemas': assistantAction('read'),
  'GET /assistants/:assistant_id/subgraphs': assistantAction('read'),
  'GET /assistants/:assistant_id/subgraphs/:namespace': assistantAction('read'),
  'POST /assistants/:assistant_id/versions': assistantAction('read'),
  'POST /assistants/:assistant_id/latest': assistantAction('update'),

  // Store
  'PUT /store/items': storeRule(
    'put',
    (req) => {
      const b = bodyOf(req);
      return { namespace: b.namespace, key: b.key, value: b.value };
    },
    (req, ns) => (bodyOf(req).namespace = ns),
  ),
  'DELETE /store/items': storeRule(
    'delete',
    (req) => {
      const b = bodyOf(req);
      return { namespace: b.namespace, key: b.key };
    },
    (req, ns) => (bodyOf(req).namespace = ns),
  ),
  'GET /store/items': storeRule(
    'get',
    (req) => {
      const q = req.query as Json;
      const ns = typeof q.namespace === 'string' && q.namespace ? q.namespace.split('.') : [];
      return { namespace: ns, key: q.key };
    },
    (req, ns) => ((req.query as Json).namespace = (ns as string[]).join('.')),
  ),
  'POST /store/items/search': storeRule(
    'search',
    (req) => {
      const b = bodyOf(req);
      return {
        namespace: b.namespace_prefix,
        filter: b.filter,
        limit: b.limit,
        offset: b.offset,
        query: b.query,
      };
    },
    (req, ns) => (bodyOf(req).namespace_prefix = ns),
  ),
  'POST /store/namespaces': storeRule(
    'list_namespaces',
    (req) => {
      const b = bodyOf(req);
      return {
        namespace: b.prefix,
        suffix: b.suffix,
        max_depth: b.max_depth,
        limit: b.limit,
        offset: b.offset,
      };
    },
    (req, ns) => (bodyOf(req).prefix = ns),
  ),

  // A2A
  'POST /a2a/:assistant_id': a2aRule,
};
