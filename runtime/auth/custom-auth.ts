// The project's `Auth` object (`@langchain/langgraph-sdk/auth`), named by `auth.path`: its
// `authenticate` handler makes the user of a request, its `on` handlers allow, refuse or filter
// each action. Semantics follow the official JS server.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { AppError } from '../../common/errors/index.js';
import { ConfigFileError, importUserModule } from '../config/index.js';
import { compileFilter } from './filter.js';
import type { AuthContext, AuthFilter, AuthResource, AuthUser } from './types.js';

type Handler = (request: {
  event: string;
  resource: string;
  action: string;
  value: unknown;
  permissions: string[];
  user: AuthUser;
}) => unknown;

interface HandlerCache {
  authenticate?: (request: Request) => unknown;
  callbacks?: Record<string, Handler>;
}

export class AuthLoadError extends ConfigFileError {
  override name = 'AuthLoadError';
}

/** An `HTTPException` of the SDK (or anything shaped like one): its status, message, headers. */
function httpException(err: unknown): AppError | undefined {
  if (typeof err !== 'object' || err === null || !('status' in err) || !('headers' in err))
    return undefined;
  const status = Number((err as { status: unknown }).status);
  if (!Number.isInteger(status) || status < 400 || status > 599) return undefined;
  const message = (err as { message?: unknown }).message;
  const headers = Object.fromEntries(
    Object.entries(((err as { headers: unknown }).headers ?? {}) as Record<string, unknown>).map(
      ([k, v]) => [k, String(v)],
    ),
  );
  return new AppError(
    status === 403 ? 'FORBIDDEN' : 'UNAUTHORIZED',
    typeof message === 'string' && message ? message : 'Unauthorized',
    { status, headers, cause: err },
  );
}

const rethrow = (err: unknown): never => {
  throw httpException(err) ?? err;
};

export class CustomAuth {
  private readonly callbacks: Record<string, Handler>;

  constructor(private readonly handlers: HandlerCache) {
    this.callbacks = handlers.callbacks ?? {};
  }

  /** Whether any `on` handler exists: without one, every action is allowed unfiltered. */
  get authorizes(): boolean {
    return Object.keys(this.callbacks).length > 0;
  }

  /** Runs `authenticate`; undefined when the project defines none (requests pass as anonymous). */
  async authenticate(request: Request): Promise<AuthContext | undefined> {
    if (!this.handlers.authenticate) return undefined;
    let result: unknown;
    try {
      result = await this.handlers.authenticate(request);
    } catch (err) {
      return rethrow(err);
    }
    if (typeof result === 'string') {
      return {
        scopes: [],
        user: { identity: result, display_name: result, permissions: [], is_authenticated: true },
      };
    }
    if (typeof result === 'object' && result !== null && 'identity' in result) {
      const fields = result as Record<string, unknown>;
      if (typeof fields.identity === 'string') {
        const scopes = Array.isArray(fields.permissions) ? fields.permissions.map(String) : [];
        return {
          scopes,
          user: {
            ...fields,
            identity: fields.identity,
            permissions: scopes,
            is_authenticated: (fields.is_authenticated as boolean | undefined) ?? true,
            display_name: (fields.display_name as string | undefined) ?? fields.identity,
          },
        };
      }
    }
    throw new Error(
      'Invalid auth response received. Make sure to either return a `string` or an object with `identity` property.',
    );
  }

  /**
   * Runs the most specific `on` handler for the action (`resource:action`, `resource`,
   * `*:action`, `*`). The handler may change `value` in place (e.g. add metadata); a returned
   * filter is compiled for SQL; `false` is 403.
   */
  async authorize(
    context: AuthContext | undefined,
    resource: AuthResource,
    action: string,
    value: Record<string, unknown>,
  ): Promise<AuthFilter | undefined> {
    const key = [`${resource}:${action}`, resource, `*:${action}`, '*'].find(
      (k) => this.callbacks[k],
    );
    const handler = key ? this.callbacks[key] : undefined;
    if (!handler || !context) return undefined;
    let result: unknown;
    try {
      result = await handler({
        event: `${resource}:${action}`,
        resource,
        action,
        value,
        permissions: context.scopes,
        user: context.user,
      });
    } catch (err) {
      return rethrow(err);
    }
    if (result === undefined || result === null || result === true) return undefined;
    if (result === false) throw new AppError('FORBIDDEN', 'Forbidden');
    if (typeof result !== 'object' || Array.isArray(result)) {
      throw new AppError(
        'INTERNAL',
        `Auth handler returned invalid result. Expected filter object, null, undefined or boolean. Got "${typeof result}" instead.`,
      );
    }
    const filter = compileFilter(result as Record<string, unknown>);
    return Object.keys(filter).length ? filter : undefined;
  }
}

/** Imports `auth.path` (`./file.ts:export`, default export without a name) relative to the config. */
export async function loadCustomAuth(spec: string, dir: string): Promise<CustomAuth> {
  const colon = spec.lastIndexOf(':');
  const hasExport = colon > 1;
  const file = resolve(dir, hasExport ? spec.slice(0, colon) : spec);
  const exportName = hasExport ? spec.slice(colon + 1) : 'default';
  const where = `auth.path "${spec}" (${file})`;
  if (!existsSync(file)) throw new AuthLoadError(`Failed to load ${where}: file not found`);
  let mod: Record<string, unknown>;
  try {
    mod = await importUserModule(file);
  } catch (err) {
    throw new AuthLoadError(`Failed to load ${where}: ${(err as Error).message}`, { cause: err });
  }
  const exported = mod[exportName];
  if (exported === undefined || exported === null)
    throw new AuthLoadError(`Failed to load ${where}: the module has no export "${exportName}"`);
  if (typeof exported !== 'object' || !('~handlerCache' in exported))
    throw new AuthLoadError(
      `Failed to load ${where}: export "${exportName}" must be an instance of Auth from @langchain/langgraph-sdk/auth`,
    );
  return new CustomAuth((exported as { '~handlerCache': HandlerCache })['~handlerCache']);
}
