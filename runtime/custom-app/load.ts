// Loads the app that `http.app` names ("./file.ts:export", default export without a name): a
// Hono app, as the official JS server takes, or any object with a `fetch(Request)` handler.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigFileError } from '../config/index.js';

export class CustomAppLoadError extends ConfigFileError {
  override name = 'CustomAppLoadError';
}

type Handler = (c: never, next: never) => unknown;

/** What Graphdock reads of a Hono app: its route table (middleware included) and error handler. */
export interface HonoLike {
  routes: Array<{ method: string; path: string; handler: Handler }>;
  errorHandler?: (err: Error, c: never) => Response | Promise<Response>;
  fetch(request: Request, env?: unknown): Response | Promise<Response>;
}

export type CustomApp =
  | { kind: 'hono'; app: HonoLike }
  | { kind: 'fetch'; fetch: (request: Request) => Response | Promise<Response> };

function isHono(value: object): value is HonoLike {
  return (
    Array.isArray((value as { routes?: unknown }).routes) &&
    typeof (value as { fetch?: unknown }).fetch === 'function'
  );
}

export async function loadCustomApp(spec: string, dir: string): Promise<CustomApp> {
  const colon = spec.lastIndexOf(':');
  const hasExport = colon > 1;
  const file = resolve(dir, hasExport ? spec.slice(0, colon) : spec);
  const exportName = hasExport ? spec.slice(colon + 1) : 'default';
  const where = `http.app "${spec}" (${file})`;
  if (!existsSync(file)) throw new CustomAppLoadError(`Failed to load ${where}: file not found`);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (err) {
    throw new CustomAppLoadError(`Failed to load ${where}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const exported = mod[exportName];
  if (typeof exported === 'object' && exported !== null) {
    if (isHono(exported)) return { kind: 'hono', app: exported };
    const { fetch } = exported as { fetch?: unknown };
    if (typeof fetch === 'function')
      return {
        kind: 'fetch',
        fetch: (request) => (fetch as (r: Request) => Response).call(exported, request),
      };
  }
  throw new CustomAppLoadError(
    `Failed to load ${where}: export "${exportName}" must be a Hono app or an object with a fetch(Request) method`,
  );
}
