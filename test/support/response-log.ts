// Every status code the servers under test answered, per operation, against the statuses the
// OpenAPI document declares. The servers note what they answer (GRAPHDOCK_RESPONSE_LOG, see
// runtime/http/response-log.ts); the integration run's teardown compares.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const RESPONSE_LOG_ENV = 'GRAPHDOCK_RESPONSE_LOG';

export interface LoggedResponse {
  method: string;
  path: string;
  status: number;
}

interface OpenApiDocument {
  paths: Record<string, Record<string, { responses?: Record<string, unknown> }>>;
}

export function readResponseLog(dir: string): LoggedResponse[] {
  if (!existsSync(dir)) return [];
  const seen = new Map<string, LoggedResponse>();
  for (const name of readdirSync(dir)) {
    for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
      if (line.trim() === '') continue;
      const entry = JSON.parse(line) as LoggedResponse;
      seen.set(`${entry.method} ${entry.path} ${entry.status}`, entry);
    }
  }
  return [...seen.values()];
}

export interface StatusCoverage {
  /** Distinct (operation, status) pairs observed on documented operations. */
  checked: number;
  /** `METHOD /path status` for each observed status the operation does not declare. */
  undeclared: string[];
  /** Routes answered but absent from the document (hidden ones, CORS preflights, HEAD). */
  undocumented: string[];
}

export function statusCoverage(document: OpenApiDocument, log: LoggedResponse[]): StatusCoverage {
  const result: StatusCoverage = { checked: 0, undeclared: [], undocumented: [] };
  for (const { method, path, status } of log) {
    const operation = document.paths[path]?.[method.toLowerCase()];
    if (!operation) {
      result.undocumented.push(`${method} ${path}`);
      continue;
    }
    result.checked++;
    const responses = operation.responses ?? {};
    const declared =
      String(status) in responses ||
      `${String(status)[0]}XX` in responses ||
      'default' in responses;
    if (!declared) result.undeclared.push(`${method} ${path} ${status}`);
  }
  result.undeclared.sort();
  result.undocumented = [...new Set(result.undocumented)].sort();
  return result;
}
