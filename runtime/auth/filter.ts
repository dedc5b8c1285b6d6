// An `on` handler's filter (`{ owner: "alice" }`, `{ owner: { $eq: "alice" } }`,
// `{ tags: { $contains: "x" } }`) as one JSON containment pattern for the stores' SQL.
import { AppError } from '../../common/errors/index.js';
import { isJsonObject } from '../../common/json/index.js';
import type { AuthFilter } from './types.js';

export function compileFilter(filter: Record<string, unknown>): AuthFilter {
  const pattern: AuthFilter = {};
  for (const [key, condition] of Object.entries(filter)) {
    if (!isJsonObject(condition) || !Object.keys(condition).some((k) => k.startsWith('$'))) {
      pattern[key] = condition;
      continue;
    }
    const operators = Object.keys(condition);
    if (operators.length !== 1 || !['$eq', '$contains'].includes(operators[0] ?? '')) {
      // Ignoring an operator would widen what the caller sees: refuse instead.
      throw new AppError(
        'INTERNAL',
        `Auth handler returned an unsupported filter for "${key}": ${JSON.stringify(condition)} (supported: a value, {"$eq": value}, {"$contains": value or list})`,
      );
    }
    if ('$eq' in condition) pattern[key] = condition.$eq;
    else pattern[key] = [condition.$contains].flat();
  }
  return pattern;
}
