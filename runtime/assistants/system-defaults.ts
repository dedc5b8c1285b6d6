// `LANGGRAPH_CONFIG`: the config and context each graph's system assistant is created with, as
// JSON keyed by graph id (`{"agent": {"configurable": {...}, "context": {...}}}`), the official
// servers' environment variable. `context` is the assistant's context; every other key is its
// config. Like the official servers, it applies when the system assistant is created: an
// existing one keeps what it has.
import { z } from 'zod';
import { ConfigFileError } from '../config/index.js';

const Defaults = z.record(
  z.string(),
  z
    .record(z.string(), z.unknown())
    .and(z.object({ context: z.record(z.string(), z.unknown()).optional() })),
);

export interface SystemAssistantDefaults {
  config: Record<string, unknown>;
  context: Record<string, unknown>;
}

/** The defaults by graph id; a value that is not such JSON stops start-up. */
export function systemAssistantDefaults(
  raw: string | undefined,
): Map<string, SystemAssistantDefaults> {
  const result = new Map<string, SystemAssistantDefaults>();
  if (raw === undefined || raw.trim() === '') return result;
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (err) {
    throw new ConfigFileError(`LANGGRAPH_CONFIG: not valid JSON: ${(err as Error).message}`);
  }
  const parsed = Defaults.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new ConfigFileError(
      `LANGGRAPH_CONFIG: expected an object of graph ids to config objects:\n  ${issues.join('\n  ')}`,
    );
  }
  for (const [graphId, { context, ...config }] of Object.entries(parsed.data)) {
    result.set(graphId, { config, context: context ?? {} });
  }
  return result;
}
