// `select` on a thread's state and history (the Python SDK's `ThreadStateSelectField`): a
// snapshot keeps only the fields named, and `values.<key>` keeps one key of the values.
import { z } from 'zod';
import { queryList } from '../../common/json/index.js';
import type { ThreadStateBody } from '../state/index.js';

const STATE_FIELDS = [
  'values',
  'next',
  'tasks',
  'checkpoint',
  'metadata',
  'created_at',
  'parent_checkpoint',
  'interrupts',
  'checkpoint_id',
  'parent_checkpoint_id',
] as const;
type StateField = (typeof STATE_FIELDS)[number];

/** The id beside each checkpoint goes with it: the JS SDK's snapshot carries both. */
const COMPANIONS: Partial<Record<StateField, StateField>> = {
  checkpoint: 'checkpoint_id',
  parent_checkpoint: 'parent_checkpoint_id',
};

const SelectEntry = z
  .string()
  .refine((s) => (STATE_FIELDS as readonly string[]).includes(s) || /^values\..+/.test(s), {
    message: `Expected one of ${STATE_FIELDS.join(', ')}, or values.<key>`,
  });
export const StateSelect = z.array(SelectEntry);

/** As `StateSelect`, from a query string. */
export const StateSelectQuery = queryList().pipe(StateSelect);

export function selectState(
  state: ThreadStateBody,
  select: readonly string[] | null | undefined,
): Partial<ThreadStateBody> {
  if (!select?.length) return state;
  const fields = new Set<string>();
  const valueKeys: string[] = [];
  for (const entry of select) {
    if (entry.startsWith('values.')) valueKeys.push(entry.slice('values.'.length));
    else {
      fields.add(entry);
      const companion = COMPANIONS[entry as StateField];
      if (companion) fields.add(companion);
    }
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(state)) if (fields.has(key)) out[key] = value;
  if (valueKeys.length && !fields.has('values')) out.values = pickKeys(state.values, valueKeys);
  return out;
}

function pickKeys(values: unknown, keys: string[]): Record<string, unknown> {
  if (values === null || typeof values !== 'object' || Array.isArray(values)) return {};
  const source = values as Record<string, unknown>;
  return Object.fromEntries(keys.filter((k) => k in source).map((k) => [k, source[k]]));
}
