// Builds the fastify application from ready services. Listening is the caller's business.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import {
  jsonSchemaTransform,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import type { Logger } from '../../common/logging/index.js';
import type { Registry } from '../../common/metrics/index.js';
import type { HttpSettings } from '../config/index.js';
import { assistantRoutes, type AssistantService } from '../assistants/index.js';
import { runRoutes, type RunEventLog, type RunService } from '../runs/index.js';
import { threadRoutes, type ThreadService } from '../threads/index.js';
import { webhookRoutes, type WebhookDeliveries } from '../webhooks/index.js';
import { registerApiKeyAuth } from './auth.js';
import { errorHandler, notFoundHandler } from './errors.js';
import { metaRoutes, type MetaInfo } from './meta-routes.js';
import { registerHttpMetrics } from './metrics.js';

export interface AppDeps {
  logger: Logger;
  metrics: Registry;
  apiKeys: string[];
  http: HttpSettings;
  info: MetaInfo;
  assistants: AssistantService;
  threads: ThreadService;
  runs: RunService;
  runEvents: RunEventLog;
  webhooks: WebhookDeliveries;
  checkDb: () => Promise<void>;
}

/** Bodies are JSON whatever the declared content type (the official server does not check it). */
function parseJsonBody(
  _req: unknown,
  body: string,
  done: (err: Error | null, value?: unknown) => void,
): void {
  if (body.trim() === '') return done(null, undefined);
  try {
    done(null, JSON.parse(body));
  } catch (err) {
    done(err as Error);
  }
}

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  // Typed as fastify's logger interface so the instance keeps fastify's default generics.
  const logger: FastifyBaseLogger = deps.logger;
  const app = Fastify({
    loggerInstance: logger,
    // Per-request access logs would dominate the output; metrics cover request volume.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 25 * 1024 * 1024,
    routerOptions: { ignoreTrailingSlash: true },
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  // Response schemas document the API; replies are already plain JSON, so skip re-validating them.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, parseJsonBody);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);

  const prefix = deps.http.mount_prefix?.replace(/\/$/, '') ?? '';
  registerApiKeyAuth(app, deps.apiKeys, prefix);
  registerHttpMetrics(app, deps.metrics);

  const meta = !deps.http.disable_meta;
  if (meta) {
    await app.register(swagger, {
      openapi: {
        info: { title: 'Graphdock Agent Server', version: deps.info.version },
      },
      transform: jsonSchemaTransform,
    });
  }

  await app.register(
    async (scoped) => {
      await scoped.register(metaRoutes(deps.info, deps.metrics, deps.checkDb, meta));
      if (!deps.http.disable_assistants) await scoped.register(assistantRoutes(deps.assistants));
      if (!deps.http.disable_threads) await scoped.register(threadRoutes(deps.threads));
      if (!deps.http.disable_runs) await scoped.register(runRoutes(deps.runs, deps.runEvents));
      if (!deps.http.disable_runs) await scoped.register(webhookRoutes(deps.webhooks));
      if (meta) {
        scoped.get('/openapi.json', { schema: { hide: true } }, () => app.swagger());
        await scoped.register(swaggerUi, { routePrefix: '/docs' });
      }
    },
    { prefix },
  );
  return app;
}
