// Builds the fastify application from ready services. Listening is the caller's business.
import type { IncomingMessage, ServerResponse } from 'node:http';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import websocket from '@fastify/websocket';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import {
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import { MAX_BODY_BYTES } from '../../common/limits/index.js';
import type { Logger } from '../../common/logging/index.js';
import type { Registry } from '../../common/metrics/index.js';
import type { AuthSettings, HttpSettings } from '../config/index.js';
import {
  PRE_AUTHENTICATED,
  registerCustomAuth,
  type AuthLookups,
  type CustomAuth,
} from '../auth/index.js';
import { loadFrontServer, type CustomApp } from '../custom-app/index.js';
import { apiGate } from './gate.js';
import { a2aRoutes, type A2aService } from '../a2a/index.js';
import { assistantRoutes, type AssistantService } from '../assistants/index.js';
import { McpService, mcpRoutes, type Loopback } from '../mcp/index.js';
import { cronRoutes, type CronService } from '../crons/index.js';
import { protocolRoutes, type ProtocolService } from '../protocol/index.js';
import { runRoutes, type RunEventLog, type RunService } from '../runs/index.js';
import { storeRoutes, type StoreService } from '../store/index.js';
import { threadRoutes, type ThreadService } from '../threads/index.js';
import { uiRoutes, type UiBundle } from '../ui/index.js';
import { webhookRoutes, type WebhookDeliveries } from '../webhooks/index.js';
import { platformAuth, registerApiKeyAuth } from './auth.js';
import type { ControlPlaneKeyVerifier } from './key-verifier.js';
import { registerCors } from './cors.js';
import { declareHttpErrors } from './declared-errors.js';
import { errorHandler, frameworkErrorHandler, notFoundHandler } from './errors.js';
import { parseJsonBody, registerStorableStrings } from './json-input.js';
import { metaRoutes, type MetaInfo } from './meta-routes.js';
import { registerHttpMetrics } from './metrics.js';
import { registerRequestLog } from './request-log.js';
import { registerResponseLog } from './response-log.js';
import { enabledGroups, type RouteGroup } from './route-groups.js';

export interface AppDeps {
  logger: Logger;
  metrics: Registry;
  apiKeys: string[];
  /** Keys of the deployment's workspace, checked with the control plane. */
  keyVerifier?: ControlPlaneKeyVerifier;
  /** `auth.path` loaded: it replaces the API-key check. */
  customAuth?: { auth: CustomAuth; lookups: AuthLookups } | undefined;
  /**
   * Routes (under the prefix) that custom auth leaves to these API keys instead: `graphdock
   * dev`'s trace store, which its own tracer writes to and the app's users do not own.
   */
  platformRoutes?: { path: string; keys: string[] } | undefined;
  authSettings?: AuthSettings | undefined;
  http: HttpSettings;
  info: MetaInfo;
  assistants: AssistantService;
  threads: ThreadService;
  runs: RunService;
  runEvents: RunEventLog;
  protocol: ProtocolService;
  store: StoreService;
  a2a: A2aService;
  crons: CronService;
  webhooks: WebhookDeliveries;
  /** The bundles of `ui`, by graph id; without them there are no /ui routes. */
  ui?: Map<string, UiBundle> | undefined;
  /** Route groups of other contexts, mounted after the core API under the same prefix. */
  routeGroups?: RouteGroup[];
  checkDb: () => Promise<void>;
  /** `http.app` loaded: mounted in front of the API (custom-app/front.ts). */
  customApp?: CustomApp | undefined;
  /** Test support: see response-log.ts. */
  responseLog?: string | undefined;
}

/** `/api/` → `/api`; a prefix without its leading slash gets one. */
function mountPrefix(value: string | undefined): string {
  const trimmed = (value ?? '').replace(/\/+$/, '');
  return trimmed === '' || trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
}

/** `auth.openapi`: the security schemes and global requirements of the served document. */
function openapiSecurity(auth: AuthSettings | undefined) {
  const openapi = auth?.openapi;
  return {
    ...(openapi?.securitySchemes
      ? // Passed through as the project wrote it, like the official servers do.
        { components: { securitySchemes: openapi.securitySchemes as Record<string, never> } }
      : {}),
    ...(openapi?.security ? { security: openapi.security } : {}),
  };
}

/** `auth.openapi.paths`: per-operation requirements, keyed by OpenAPI path and method. */
function securityTransform(
  auth: AuthSettings | undefined,
  prefix: string,
): typeof jsonSchemaTransform {
  const paths = auth?.openapi?.paths;
  if (!paths) return jsonSchemaTransform;
  return (input) => {
    const output = jsonSchemaTransform(input);
    const path = input.url.slice(prefix.length).replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const methods = [input.route.method].flat().map((m) => m.toLowerCase());
    const security = methods.map((m) => paths[path]?.[m]).find((s) => s !== undefined);
    return security ? { ...output, schema: { ...output.schema, security } } : output;
  };
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  // Typed as fastify's logger interface so the instance keeps fastify's default generics.
  const logger: FastifyBaseLogger = deps.logger;
  const prefix = mountPrefix(deps.http.mount_prefix);
  const { customApp } = deps;
  const platform = deps.platformRoutes && platformAuth(deps.platformRoutes);
  const frontServer = customApp ? await loadFrontServer() : undefined;
  const app = Fastify({
    ...(customApp && frontServer
      ? {
          serverFactory: (handler: (req: IncomingMessage, res: ServerResponse) => void) =>
            frontServer(
              {
                app: customApp,
                prefix,
                authFirst: deps.http.middleware_order === 'auth_first',
                customRouteAuth: deps.http.enable_custom_route_auth === true,
                gate: apiGate(
                  {
                    customAuth: deps.customAuth?.auth,
                    platform,
                    apiKeys: deps.apiKeys,
                    keyVerifier: deps.keyVerifier,
                  },
                  prefix,
                ),
                preAuthenticated: PRE_AUTHENTICATED,
              },
              handler,
            ),
        }
      : {}),
    loggerInstance: logger,
    // Per-request access logs would dominate the output; metrics cover request volume.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: MAX_BODY_BYTES,
    routerOptions: { ignoreTrailingSlash: true },
    frameworkErrors: frameworkErrorHandler,
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  // Response schemas document the API; replies are already plain JSON, so skip re-validating them.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, parseJsonBody);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);

  // First, so it also sees the answers of the hooks below (401, CORS preflights).
  if (deps.responseLog) registerResponseLog(app, deps.responseLog, prefix);
  declareHttpErrors(app, prefix);
  await registerCors(app, deps.http.cors);
  if (deps.customAuth)
    registerCustomAuth(app, deps.customAuth.auth, deps.customAuth.lookups, prefix, platform);
  else registerApiKeyAuth(app, deps.apiKeys, prefix, deps.keyVerifier);
  registerStorableStrings(app, prefix);
  registerHttpMetrics(app, deps.metrics);
  registerRequestLog(app, deps.logger, deps.http.logging_headers);
  // WebSocket upgrades go through fastify's routing and hooks (auth, CORS) like any request. A
  // frame is held to a body's size (a larger one closes the socket with 1009), not ws's 100 MiB.
  await app.register(websocket, {
    options: { maxPayload: MAX_BODY_BYTES },
    errorHandler: (error, socket, request) => {
      // A client's bad frame (too large, not UTF-8): ws has begun the close handshake with its
      // code and ends the connection itself. Destroying the socket here would reset it while
      // the client is still sending, and the client would see 1006 instead of the code.
      const code = (error as { code?: unknown }).code;
      if (typeof code === 'string' && code.startsWith('WS_ERR_')) {
        request.log.warn({ err: error }, 'websocket frame refused');
        return;
      }
      request.log.error(error);
      socket.terminate();
    },
  });

  const meta = !deps.http.disable_meta;
  if (meta) {
    await app.register(swagger, {
      openapi: {
        info: { title: 'Graphdock Agent Server', version: deps.info.version },
        ...openapiSecurity(deps.authSettings),
      },
      transform: securityTransform(deps.authSettings, prefix),
      // Fills components.schemas from the zod schemas registered with an id.
      transformObject: jsonSchemaTransformObject,
    });
  }

  // The official servers' MCP endpoint calls the API the way its caller would (see mcp/service.ts).
  const loopback: Loopback = async ({ method, path, body, headers }) => {
    const res = await app.inject({
      method,
      url: `${prefix}${path}`,
      headers,
      ...(body === undefined ? {} : { payload: body as object }),
    });
    let parsed: unknown = null;
    try {
      parsed = res.body === '' ? null : JSON.parse(res.body);
    } catch {
      parsed = res.body;
    }
    return { status: res.statusCode, body: parsed };
  };

  await app.register(
    async (scoped) => {
      await scoped.register(metaRoutes(deps.info, deps.metrics, deps.checkDb, meta));
      const groups: RouteGroup[] = [
        {
          name: 'assistants',
          routes: assistantRoutes(deps.assistants),
          disabledBy: 'disable_assistants',
        },
        { name: 'threads', routes: threadRoutes(deps.threads), disabledBy: 'disable_threads' },
        {
          name: 'runs',
          routes: runRoutes(deps.runs, deps.runEvents),
          disabledBy: 'disable_runs',
        },
        {
          name: 'protocol',
          routes: protocolRoutes(deps.protocol),
          disabledBy: 'disable_runs',
        },
        { name: 'webhooks', routes: webhookRoutes(deps.webhooks), disabledBy: 'disable_runs' },
        { name: 'crons', routes: cronRoutes(deps.crons), disabledBy: 'disable_runs' },
        { name: 'store', routes: storeRoutes(deps.store), disabledBy: 'disable_store' },
        {
          name: 'a2a',
          routes: a2aRoutes(deps.a2a, deps.info.version, prefix),
          disabledBy: 'disable_a2a',
        },
        ...(deps.ui
          ? [{ name: 'ui', routes: uiRoutes(deps.ui, prefix), disabledBy: 'disable_ui' as const }]
          : []),
        {
          name: 'mcp',
          routes: mcpRoutes(
            new McpService(loopback, deps.logger.child({ context: 'mcp' })),
            deps.info.version,
          ),
          disabledBy: 'disable_mcp',
        },
        ...(deps.routeGroups ?? []),
      ];
      for (const group of enabledGroups(groups, deps.http)) await scoped.register(group.routes);
      if (meta) {
        scoped.get('/openapi.json', { schema: { hide: true } }, () => app.swagger());
        await scoped.register(swaggerUi, { routePrefix: '/docs' });
      }
    },
    { prefix },
  );
  return app;
}
