// Types of bin/module-caches.mjs (plain JavaScript: it runs before any loader for TypeScript).
export function enableCompileCache(
  env: Record<string, string | undefined>,
  defaultDir: string | undefined,
): string | undefined;
export function resolutionKey(
  specifier: string,
  context: {
    parentURL?: string | undefined;
    conditions?: readonly string[];
    importAttributes?: Record<string, string>;
  },
): string | undefined;
export function enableResolutionCache(env: Record<string, string | undefined>): boolean;
