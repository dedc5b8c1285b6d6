// HTTP of the trace store under /api/v1: the LangSmith ingest endpoints the official SDKs call,
// the LangSmith reads (runs, query, sessions), feedback and its presigned tokens, the thread view
// and retention. The host app authenticates, but for the use of a presigned token
// (`isFeedbackTokenUse`); `tenantOf` names the caller's workspace. Not in the OpenAPI documents: these
// are LangSmith's wire format, described in docs/traces.md.
import { createGunzip } from 'node:zlib';
import type { Readable } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../common/errors/index.js';
import { clipJsonDepth } from '../common/json/index.js';
import { boundaryOf, parseMultipartRuns } from './multipart.js';
import {
  FeedbackCreate,
  FeedbackIdParams,
  FeedbackQuery,
  FeedbackUpdate,
  Retention,
  RunBatch,
  RunCreate,
  RunIdParams,
  RunQueryBody,
  RunUpdate,
  SessionCreate,
  SessionIdParams,
  SessionQuery,
  ThreadParams,
  ThreadQuery,
  TokenCreateBody,
  TokenFeedback,
  TokenFeedbackQuery,
  TokenListQuery,
  TokenParams,
  UpsertQuery,
} from './schemas.js';
import type { TraceService } from './service.js';

export const TRACES_PREFIX = '/api/v1';
/** Largest ingest body; /info tells the SDKs to batch below a third of it. */
const INGEST_BODY_LIMIT = 64 * 1024 * 1024;
const BATCH_SIZE_LIMIT_BYTES = 20 * 1024 * 1024;
const CLIPPED_WARNING = 'trace values nested deeper than the limit were cut';
const FEEDBACK_TOKENS = `${TRACES_PREFIX}/feedback/tokens`;
const TOKEN_USE = /^\/api\/v1\/feedback\/tokens\/[0-9a-fA-F-]{36}\/?$/;

/**
 * Whether a request (its path after the mount prefix, without the query) uses a presigned
 * feedback token: the only trace route the host app lets through without a key.
 */
export function isFeedbackTokenUse(method: string, path: string): boolean {
  return (method === 'GET' || method === 'POST') && TOKEN_USE.test(path);
}

export interface TraceRouteOptions {
  version: string;
  tenantOf: (request: FastifyRequest) => string;
  /** The store's `/api/v1` as users reach it: the base of presigned feedback URLs. */
  publicUrl?: string | undefined;
}

export function traceRoutes(
  service: TraceService,
  options: TraceRouteOptions,
): FastifyPluginAsyncZod {
  const { tenantOf } = options;
  return async (app) => {
    // The ingest's own parsers, in this plugin only: the SDKs drop a whole batch that is refused,
    // so values nested too deep are cut here rather than refused (docs/limits.md), and run data
    // keeps any string, as the store holds them encoded (the runtime's body checks do not apply).
    app.removeAllContentTypeParsers();
    app.addContentTypeParser(
      'multipart/form-data',
      { parseAs: 'buffer', bodyLimit: INGEST_BODY_LIMIT },
      (_req, body, done) => done(null, body),
    );
    app.addContentTypeParser('*', { parseAs: 'string' }, (req, body, done) => {
      const raw = body.toString();
      if (raw.trim() === '') return done(null, undefined);
      const { text, clipped } = clipJsonDepth(raw);
      if (clipped) req.log.warn({ clipped }, CLIPPED_WARNING);
      try {
        done(null, JSON.parse(text));
      } catch (err) {
        done(err as Error);
      }
    });
    // The JS SDK gzips its bodies since /info offers it; plain bodies are accepted too.
    app.addHook('preParsing', async (request, _reply, payload) => {
      if (request.headers['content-encoding'] !== 'gzip') return payload;
      delete request.headers['content-encoding'];
      // Fastify compares the bytes received, not the bytes decoded, with Content-Length.
      const gunzip = createGunzip();
      const counted = gunzip as unknown as Readable & { receivedEncodedLength: number };
      counted.receivedEncodedLength = 0;
      payload.on('data', (chunk: Buffer) => (counted.receivedEncodedLength += chunk.length));
      payload.pipe(gunzip);
      return counted;
    });
    const hide = { hide: true };
    const accepted = { message: 'Runs batch ingested' };

    app.get(`${TRACES_PREFIX}/info`, { schema: hide }, () => ({
      version: options.version,
      license_expiration_time: null,
      batch_ingest_config: {
        // The SDKs then send a batch as one JSON body to /runs/batch, the JS SDK merging a run's
        // update into its create when both are in the batch. Measured against gzipped multipart
        // (bench/traces): the JS SDK's CPU per run fell by about a third and the api's by about
        // a quarter. Multipart (plain or gzipped) is still taken from any client that sends it.
        use_multipart_endpoint: false,
        scale_up_qsize_trigger: 1000,
        scale_up_nthreads_limit: 16,
        scale_down_nempty_trigger: 4,
        // Run operations per batch: a statement and a commit per batch, so fewer, larger
        // batches cut the api's and PostgreSQL's CPU per run (and the SDK's) by about 40%.
        size_limit: 1000,
        size_limit_bytes: BATCH_SIZE_LIMIT_BYTES,
      },
      instance_flags: {
        // For an SDK that uses multipart anyway (the JS SDK compresses multipart runs as they
        // are queued when offered; plain multipart builds a Blob per part, ~3x dearer still).
        // Python's SDK only compresses with zstd.
        gzip_body_enabled: true,
        zstd_compression_enabled: false,
        dataset_examples_multipart_enabled: false,
      },
    }));

    app.post(
      `${TRACES_PREFIX}/runs/multipart`,
      { bodyLimit: INGEST_BODY_LIMIT, schema: hide },
      async (req, reply) => {
        const body = req.body;
        if (!Buffer.isBuffer(body))
          return reply.code(415).send({ detail: 'Expected multipart/form-data' });
        const parsed = parseMultipartRuns(body, boundaryOf(req.headers['content-type']));
        if (parsed.clipped) req.log.warn({ clipped: parsed.clipped }, CLIPPED_WARNING);
        const post = validParts(z.array(RunCreate), parsed.post, 'post');
        const patch = validParts(z.array(RunUpdate), parsed.patch, 'patch');
        const tenantId = tenantOf(req);
        await service.ingest(tenantId, post, patch);
        // After the runs: feedback on a run of the same batch takes its trace and project, and a
        // malformed feedback part is refused without the batch's runs (the SDKs drop a batch
        // that is refused, and do not send it again).
        const feedback = validParts(z.array(FeedbackCreate), parsed.feedback, 'feedback');
        if (feedback.length) await service.createFeedback(tenantId, feedback);
        return reply.code(202).send(accepted);
      },
    );
    app.post(
      `${TRACES_PREFIX}/runs/batch`,
      { bodyLimit: INGEST_BODY_LIMIT, schema: { ...hide, body: RunBatch } },
      async (req, reply) => {
        await service.ingest(tenantOf(req), req.body.post ?? [], req.body.patch ?? []);
        return reply.code(202).send(accepted);
      },
    );
    app.post(
      `${TRACES_PREFIX}/runs`,
      { bodyLimit: INGEST_BODY_LIMIT, schema: { ...hide, body: RunCreate } },
      async (req, reply) => {
        await service.ingest(tenantOf(req), [req.body], []);
        return reply.code(202).send(accepted);
      },
    );
    app.patch(
      `${TRACES_PREFIX}/runs/:run_id`,
      { bodyLimit: INGEST_BODY_LIMIT, schema: { ...hide, params: RunIdParams, body: RunUpdate } },
      async (req, reply) => {
        await service.ingest(tenantOf(req), [], [{ ...req.body, id: req.params.run_id }]);
        return reply.code(202).send(accepted);
      },
    );

    app.post(`${TRACES_PREFIX}/runs/query`, { schema: { ...hide, body: RunQueryBody } }, (req) =>
      service.queryRuns(tenantOf(req), req.body),
    );
    app.get(`${TRACES_PREFIX}/runs/:run_id`, { schema: { ...hide, params: RunIdParams } }, (req) =>
      service.getRun(tenantOf(req), req.params.run_id),
    );

    app.get(
      `${TRACES_PREFIX}/sessions`,
      { schema: { ...hide, querystring: SessionQuery } },
      (req) => service.listSessions(tenantOf(req), req.query),
    );
    app.get(
      `${TRACES_PREFIX}/sessions/:session_id`,
      { schema: { ...hide, params: SessionIdParams } },
      (req) => service.getSession(tenantOf(req), req.params.session_id),
    );
    app.post(
      `${TRACES_PREFIX}/sessions`,
      { schema: { ...hide, body: SessionCreate, querystring: UpsertQuery } },
      (req) => service.createSession(tenantOf(req), req.body, req.query.upsert === 'true'),
    );

    app.post(
      `${TRACES_PREFIX}/feedback`,
      { schema: { ...hide, body: FeedbackCreate } },
      async (req) => {
        const [stored] = await service.createFeedback(tenantOf(req), [req.body]);
        return stored;
      },
    );
    app.get(
      `${TRACES_PREFIX}/feedback`,
      { schema: { ...hide, querystring: FeedbackQuery } },
      (req) => service.listFeedback(tenantOf(req), req.query),
    );
    app.get(
      `${TRACES_PREFIX}/feedback/:feedback_id`,
      { schema: { ...hide, params: FeedbackIdParams } },
      (req) => service.getFeedback(tenantOf(req), req.params.feedback_id),
    );
    app.patch(
      `${TRACES_PREFIX}/feedback/:feedback_id`,
      { schema: { ...hide, params: FeedbackIdParams, body: FeedbackUpdate } },
      (req) => service.updateFeedback(tenantOf(req), req.params.feedback_id, req.body),
    );
    app.delete(
      `${TRACES_PREFIX}/feedback/:feedback_id`,
      { schema: { ...hide, params: FeedbackIdParams } },
      async (req, reply) => {
        await service.deleteFeedback(tenantOf(req), req.params.feedback_id);
        return reply.code(204).send();
      },
    );
    app.post(FEEDBACK_TOKENS, { schema: { ...hide, body: TokenCreateBody } }, async (req) => {
      const tokens = await service.createFeedbackTokens(
        tenantOf(req),
        Array.isArray(req.body) ? req.body : [req.body],
        tokenUrl(req, options.publicUrl),
      );
      return Array.isArray(req.body) ? tokens : tokens[0];
    });
    app.get(FEEDBACK_TOKENS, { schema: { ...hide, querystring: TokenListQuery } }, (req) =>
      service.listFeedbackTokens(tenantOf(req), req.query, tokenUrl(req, options.publicUrl)),
    );
    // The uses of a presigned token: no key, the token names the workspace, run and key.
    app.get(
      `${FEEDBACK_TOKENS}/:token`,
      { schema: { ...hide, params: TokenParams, querystring: TokenFeedbackQuery } },
      (req) =>
        service.feedbackWithToken(req.params.token, {
          ...req.query,
          value: jsonOrText(req.query.value),
          correction: jsonOrText(req.query.correction),
        }),
    );
    app.post(
      `${FEEDBACK_TOKENS}/:token`,
      { schema: { ...hide, params: TokenParams, body: TokenFeedback.nullish() } },
      (req) => service.feedbackWithToken(req.params.token, req.body ?? {}),
    );

    app.get(
      `${TRACES_PREFIX}/threads/:thread_id`,
      { schema: { ...hide, params: ThreadParams, querystring: ThreadQuery } },
      (req) => service.thread(tenantOf(req), req.params.thread_id, req.query.session_id),
    );

    app.get(`${TRACES_PREFIX}/trace-retention`, { schema: hide }, (req) =>
      service.retention(tenantOf(req)),
    );
    app.put(`${TRACES_PREFIX}/trace-retention`, { schema: { ...hide, body: Retention } }, (req) =>
      service.setRetention(tenantOf(req), req.body.ttl_days),
    );
  };
}

/**
 * A token's URL: under the store's public URL when one is set (GRAPHDOCK_TRACES_PUBLIC_URL), else
 * where the request to `/feedback/tokens` came (its scheme, host and mount prefix). A proxy's
 * X-Forwarded-* count only where the app trusts proxies (fastify's trustProxy), which the api and
 * the runtime do not.
 */
function tokenUrl(req: FastifyRequest, publicUrl: string | undefined): (id: string) => string {
  if (publicUrl) return (id) => `${publicUrl}/feedback/tokens/${id}`;
  const path = (req.url.split('?')[0] ?? '').replace(/\/+$/, '');
  return (id) => `${req.protocol}://${req.host}${path}/${id}`;
}

/** A query value that is JSON (an object, a number) as that value, else as the text it is. */
function jsonOrText(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Multipart parts are validated here, not by the route schema: their 422 reads the same. */
function validParts<T>(schema: z.ZodType<T>, parts: unknown, kind: string): T {
  const result = schema.safeParse(parts);
  if (result.success) return result.data;
  throw new AppError(
    'VALIDATION',
    result.error.issues.map((issue) => ({
      loc: ['body', kind, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))],
      msg: issue.message,
      type: issue.code,
    })),
  );
}
