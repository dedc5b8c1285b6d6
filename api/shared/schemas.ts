// Request and response pieces every control-plane resource uses.
import { z } from 'zod';

export const Pagination = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  offset: z.coerce.number().int().min(0).default(0),
});
export type Pagination = z.infer<typeof Pagination>;

/** A Kubernetes namespace name (an RFC 1123 label), checked before the cluster refuses it. */
export const NamespaceName = z
  .string()
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, {
    error: (issue) =>
      `'${String(issue.input)}' is not a valid Kubernetes namespace name: lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters`,
  });

export const Detail = z.object({ detail: z.string() });
export const ValidationErrorBody = z.object({
  detail: z.array(
    z.object({
      loc: z.array(z.union([z.string(), z.number()])),
      msg: z.string(),
      type: z.string(),
    }),
  ),
});

export function page<T extends z.ZodType>(item: T) {
  return z.object({ resources: z.array(item), offset: z.number().int() });
}

/** One page of an already ordered list, with the offset of the next page. */
export function paginate<T>(items: T[], { limit, offset }: Pagination) {
  const resources = items.slice(offset, offset + limit);
  return { resources, offset: offset + resources.length };
}

/** Creation time in milliseconds (`creationTimestamp` has whole seconds only), for `created_at` and list order. */
export const CREATED_AT = 'graphdock.dev/created-at';

/** Annotation holding the last time the API changed a resource (`updated_at`). */
export const UPDATED_AT = 'graphdock.dev/updated-at';

/** When a resource was created, as precisely as known. */
export function createdAt(metadata: {
  annotations?: Record<string, string>;
  creationTimestamp?: string;
}): string {
  return (
    metadata.annotations?.[CREATED_AT] ?? metadata.creationTimestamp ?? new Date(0).toISOString()
  );
}
