// Status conditions in the metav1.Condition shape, so `kubectl wait --for=condition=Ready` works.
import { z } from 'zod';

export const CONDITION_TYPES = ['Ready', 'Progressing', 'Degraded'] as const;

export const Condition = z.object({
  type: z.string().max(316),
  status: z.enum(['True', 'False', 'Unknown']),
  observedGeneration: z.number().int().min(0).optional(),
  lastTransitionTime: z.iso.datetime(),
  reason: z.string().max(1024),
  message: z.string().max(32768),
});
export type Condition = z.infer<typeof Condition>;

/** Merged per `type` by server-side apply rather than replaced as a whole list. */
export const Conditions = z
  .array(Condition)
  .max(16)
  .meta({
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['type'],
  });

/** The condition of one type, if present. */
export function findCondition(conditions: Condition[] | undefined, type: string) {
  return conditions?.find((c) => c.type === type);
}
