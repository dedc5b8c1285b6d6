// Status conditions with Kubernetes semantics: lastTransitionTime moves only when status flips.
import type { Condition } from '../../common/resources/index.js';

export interface ConditionInput {
  type: 'Ready' | 'Progressing' | 'Degraded';
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}

export function mergeConditions(
  previous: Condition[] | undefined,
  next: ConditionInput[],
  generation: number | undefined,
  now = new Date().toISOString(),
): Condition[] {
  return next.map((c) => {
    const old = previous?.find((p) => p.type === c.type);
    return {
      ...c,
      ...(generation !== undefined ? { observedGeneration: generation } : {}),
      lastTransitionTime: old && old.status === c.status ? old.lastTransitionTime : now,
    };
  });
}

/** Equal apart from timestamps and key order: no write needed. */
export function sameStatus(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

const TIMES = new Set(['lastTransitionTime', 'lastHeartbeatTime']);

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([k, v]) => v !== undefined && v !== null && !TIMES.has(k))
      .sort(([a], [b]) => a.localeCompare(b));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
