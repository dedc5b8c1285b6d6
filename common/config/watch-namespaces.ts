// GRAPHDOCK_WATCH_NAMESPACES / --watch-namespaces: the namespaces the api and the operator are
// limited to (the chart's `watchNamespaces`). Empty means every namespace.
import { z } from 'zod';

/** A Kubernetes namespace name: an RFC 1123 DNS label. */
const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export const WatchNamespacesSchema = z
  .string()
  .optional()
  .transform((v) => [...new Set((v ?? '').split(/[\s,]+/).filter(Boolean))])
  .pipe(
    z.array(
      z.string().regex(NAMESPACE, {
        message: 'each watch namespace must be a DNS label (lowercase letters, digits, -)',
      }),
    ),
  );

/** Parses a comma-separated list; throws a ZodError naming the bad entry. */
export function parseWatchNamespaces(value: string | undefined): string[] {
  return WatchNamespacesSchema.parse(value);
}
