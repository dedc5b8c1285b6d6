// The control-plane fastify application, built from ready services.
import cors from '@fastify/cors';
import swagger from '@fastify/swagger';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import {
  jsonSchemaTransform,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import { invalid } from '../../common/errors/index.js';
import { JSON_TOO_DEEP, jsonDepthExceeds } from '../../common/json/index.js';
import type { Logger } from '../../common/logging/index.js';
import { deploymentRoutes, type DeploymentService } from '../deployments/index.js';
import { listenerRoutes, type ListenerService } from '../listeners/index.js';
import type { TenancyService } from '../tenancy/index.js';
import { principalOf, registerAuth, verifyKeyRoute, type TraceKeyVerifier } from '../auth/index.js';
import { isFeedbackTokenUse, traceRoutes, type TraceService } from '../../traces/index.js';
import {
  destinationRoutes,
  exportRoutes,
  type DestinationService,
  type ExportService,
} from '../../exports/index.js';
import { errorHandler, notFoundHandler } from './errors.js';

export interface ControlPlaneAppDeps {
  logger: Logger;
  version: string;
  tenancy: TenancyService;
  /** Deployments' trace keys (the operator's Secrets), accepted on the trace routes. */
  traceKeys?: TraceKeyVerifier;
  listeners: ListenerService;
  deployments: DeploymentService;
  traces: TraceService;
  /** The trace store's `/api/v1` as users reach it: the base of presigned feedback URLs. */
  tracesPublicUrl?: string | undefined;
  destinations: DestinationService;
  exports: ExportService;
  checkReady: () => Promise<void>;
}

function parseJsonBody(
  _req: unknown,
  body: string,
  done: (err: Error | null, value?: unknown) => void,
): void {
  if (body.trim() === '') return done(null, undefined);
  // Checked on the text, as the runtime does: V8 parses deep nesting slowly (docs/limits.md).
  if (jsonDepthExceeds(body)) return done(invalid(['body'], JSON_TOO_DEEP, 'json_too_deep'));
  try {
    done(null, JSON.parse(body));
  } catch (err) {
    done(err as Error);
  }
}

export async function buildControlPlaneApp(deps: ControlPlaneAppDeps): Promise<FastifyInstance> {
  const logger: FastifyBaseLogger = deps.logger;
  const app = Fastify({
    loggerInstance: logger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 5 * 1024 * 1024,
    routerOptions: { ignoreTrailingSlash: true },
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, parseJsonBody);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);
  registerAuth(app, deps.tenancy, deps.traceKeys);
  // A presigned feedback URL is used from users' browsers (a chat page's thumbs-up): its two
  // routes answer any origin, preflight included. The rest of the api stays same-origin.
  await app.register(cors, {
    delegator: (req, callback) => {
      const method =
        req.method === 'OPTIONS'
          ? String(req.headers['access-control-request-method'])
          : req.method;
      callback(
        null,
        isFeedbackTokenUse(method, req.url?.split('?')[0] ?? '')
          ? { origin: '*', methods: ['GET', 'POST'] }
          : { origin: false },
      );
    },
  });

  await app.register(swagger, {
    openapi: {
      info: { title: 'Graphdock Control Plane API', version: deps.version },
      components: {
        securitySchemes: {
          'API Key': { type: 'apiKey', in: 'header', name: 'X-Api-Key' },
          'Tenant ID': { type: 'apiKey', in: 'header', name: 'X-Tenant-Id' },
          // The same keys as X-Api-Key, sent as `Authorization: Bearer <key>`.
          Bearer: { type: 'http', scheme: 'bearer' },
        },
      },
      security: [{ 'API Key': [] }, { Bearer: [] }],
    },
    transform: jsonSchemaTransform,
  });
  app.get('/ok', { schema: { hide: true } }, async () => {
    await deps.checkReady();
    return { ok: true };
  });
  app.get('/openapi.json', { schema: { hide: true } }, () => app.swagger());
  verifyKeyRoute(app);
  await app.register(listenerRoutes(deps.listeners));
  await app.register(deploymentRoutes(deps.deployments));
  // LangSmith-compatible trace ingest and reads; the tenant is the key's workspace.
  await app.register(
    traceRoutes(deps.traces, {
      version: deps.version,
      tenantOf: (req) => principalOf(req).workspace.id,
      publicUrl: deps.tracesPublicUrl,
    }),
  );
  // Bulk export destinations: the key's workspace and permissions.
  await app.register(
    destinationRoutes(deps.destinations, {
      callerOf: (req) => {
        const principal = principalOf(req);
        return { tenantId: principal.workspace.id, permissions: principal.permissions };
      },
    }),
  );
  // Bulk exports and their runs, in the key's workspace.
  await app.register(exportRoutes(deps.exports, (req) => principalOf(req).workspace.id));
  return app;
}
