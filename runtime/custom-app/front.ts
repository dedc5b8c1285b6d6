// The custom app in front of the built-in API, in the order the official servers use: the
// liveness, metrics and document routes first (they cannot be shadowed), then the project's
// routes, then the API. The project's global middleware (`use()` on every path) wraps all of
// it; authentication runs after that middleware (`middleware_first`, the default) or before it
// (`auth_first`), and before the project's routes only with `enable_custom_route_auth`.
import { IncomingMessage, createServer, type Server, type ServerResponse } from 'node:http';
import { getRequestListener, type HttpBindings } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { Hono, type Context, type Next } from 'hono';
import { RegExpRouter } from 'hono/router/reg-exp-router';
import { BuiltinBridge, writeResponse, type ApiHandler } from './bridge.js';
import type { CustomApp } from './load.js';

/** The API's authentication, as a check on a Fetch request (see http/gate.ts). */
export interface Gate {
  check(
    request: Request,
  ): Promise<
    | { ok: true; context: unknown }
    | { ok: false; status: number; headers: Record<string, string>; body: unknown }
  >;
}

export interface FrontSettings {
  app: CustomApp;
  /** `http.mount_prefix`, normalised ('' or '/x'). */
  prefix: string;
  authFirst: boolean;
  customRouteAuth: boolean;
  gate: Gate;
  /** Marks a request the front authenticated, so the API's own hook does not do it again. */
  preAuthenticated: symbol;
}

type Env = { Bindings: HttpBindings; Variables: Record<string, unknown> };
const SHIELDED = 'graphdock.shielded';
const BRIDGE = Symbol('graphdock.bridge');
type Outgoing = ServerResponse & { [BRIDGE]?: BuiltinBridge };
type Incoming = IncomingMessage & Record<symbol, unknown>;

/** Routes the official servers keep out of the custom app's reach. */
const UNSHADOWABLE = ['/ok', '/metrics', '/openapi.json', '/docs'];

/** Entries of a Hono route table that are middleware for every path (`app.use(fn)`). */
const isGlobal = (r: { method: string; path: string }) =>
  r.method === 'ALL' && (r.path === '*' || r.path === '/*');

/**
 * The request for fastify: the incoming one, or, when the middleware read its body, a copy
 * carrying that body (Hono keeps what it read).
 */
async function requestForApi(c: Context<Env>): Promise<IncomingMessage> {
  const incoming = c.env.incoming as Incoming;
  if (!incoming.readableDidRead && !c.req.raw.bodyUsed) return incoming;
  const body = Buffer.from(await c.req.arrayBuffer());
  const copy = new IncomingMessage(incoming.socket) as Incoming;
  copy.method = incoming.method;
  copy.url = incoming.url;
  copy.httpVersion = incoming.httpVersion;
  copy.httpVersionMajor = incoming.httpVersionMajor;
  copy.httpVersionMinor = incoming.httpVersionMinor;
  const headers = { ...incoming.headers, 'content-length': String(body.length) };
  delete headers['transfer-encoding'];
  copy.headers = headers;
  copy.rawHeaders = Object.entries(headers).flatMap(([k, v]) => [k, String(v)]);
  for (const key of Object.getOwnPropertySymbols(incoming))
    if (typeof key === 'symbol' && key.description?.startsWith('graphdock.'))
      copy[key] = incoming[key];
  copy.push(body);
  copy.push(null);
  copy.complete = true;
  return copy;
}

export function buildFront(settings: FrontSettings, api: ApiHandler) {
  const { app, prefix, gate } = settings;
  const shielded = new Set(UNSHADOWABLE.map((p) => `${prefix}${p}`));
  const isShielded = (path: string) => shielded.has(path) || path.startsWith(`${prefix}/docs/`);

  /** Authenticates once per request; an answer when refused. */
  const authenticate = async (c: Context<Env>): Promise<Response | undefined> => {
    const incoming = c.env.incoming as Incoming;
    if (incoming[settings.preAuthenticated] !== undefined) return undefined;
    const verdict = await gate.check(c.req.raw);
    if (!verdict.ok) return c.json(verdict.body as object, verdict.status as 401, verdict.headers);
    incoming[settings.preAuthenticated] = verdict.context ?? null;
    // Where the official JS server puts the user for custom routes.
    if (verdict.context) c.set('auth', verdict.context);
    return undefined;
  };

  // Which requests the project's own routes (not its global middleware) would take.
  const routes = new RegExpRouter<true>();
  let hasRoutes = false;
  if (app.kind === 'hono')
    for (const r of app.app.routes)
      if (!isGlobal(r)) {
        routes.add(r.method, r.path, true);
        hasRoutes = true;
      }
  const takenByCustomRoute = (method: string, path: string) =>
    app.kind === 'fetch' ||
    (hasRoutes && routes.match(method === 'HEAD' ? 'GET' : method, path)[0].length > 0);

  const front = new Hono<Env>();
  front.use('*', async (c, next) => {
    const path = new URL(c.req.url).pathname;
    const guarded = isShielded(path);
    c.set(SHIELDED, guarded);
    if (
      settings.authFirst &&
      (guarded || settings.customRouteAuth || !takenByCustomRoute(c.req.method, path))
    ) {
      const refused = await authenticate(c as Context<Env>);
      if (refused) return refused;
    }
    await next();
  });

  const base = prefix ? front.basePath(prefix) : front;
  /** A project route: skipped for shielded paths, authenticated first when so configured. */
  const guard =
    (handler: (c: Context<Env>, next: Next) => unknown) => async (c: Context<Env>, next: Next) => {
      if (c.get(SHIELDED)) return next();
      if (settings.customRouteAuth) {
        const refused = await authenticate(c);
        if (refused) return refused;
      }
      return handler(c, next) as Promise<Response | void>;
    };
  if (app.kind === 'hono') {
    for (const r of app.app.routes) {
      const handler = r.handler as unknown as (c: Context<Env>, next: Next) => unknown;
      if (isGlobal(r)) front.on(r.method, r.path, handler as never);
      else base.on(r.method, r.path, guard(handler) as never);
    }
    if (typeof app.app.errorHandler === 'function') front.onError(app.app.errorHandler as never);
  } else {
    // A plain fetch handler answers first; its 404 means "not mine", and the API takes it.
    const fetchFirst = guard(async (c, next) => {
      const answer = await app.fetch(c.req.raw.clone());
      if (answer.status !== 404) return answer;
      await next();
    });
    front.all('*', fetchFirst as never);
  }

  front.all('*', async (c) => {
    const outgoing = c.env.outgoing as Outgoing;
    const bridge = new BuiltinBridge(outgoing);
    outgoing[BRIDGE] = bridge;
    return bridge.run(api, await requestForApi(c));
  });

  return getRequestListener(
    async (request, env) => {
      const outgoing = (env as HttpBindings).outgoing as Outgoing;
      const response = await front.fetch(request, env);
      const bridge = outgoing[BRIDGE];
      if (!bridge) return response;
      if (bridge.isBuiltin(response)) bridge.pass(response);
      else await bridge.replace(response);
      return RESPONSE_ALREADY_SENT;
    },
    // Node's own Request and Response stay global: the rest of the runtime uses them.
    { overrideGlobalObjects: false },
  );
}

/** The HTTP server fastify serves through when a custom app is mounted (its `serverFactory`). */
export function frontServer(settings: FrontSettings, api: ApiHandler): Server {
  const listener = buildFront(settings, api);
  const server = createServer((req, res) => void listener(req, res));
  // fastify's defaults for its own servers.
  server.keepAliveTimeout = 72_000;
  server.requestTimeout = 0;
  return server;
}

export { writeResponse };
