// The user's modules named by langgraph.json (graphs, auth.path, store.index.embed). Graphdock's
// own code may be compiled JavaScript (the image, dist/), but a user's module in TypeScript loads
// as it always has: tsx's loader is registered the first time one is imported, and only then, so
// a runtime serving JavaScript graphs never loads tsx at all.
import { pathToFileURL } from 'node:url';

const TYPESCRIPT = /\.(ts|mts|cts|tsx)$/;
// This file itself running as TypeScript means a loader is in place already (tsx in a checkout,
// vitest in tests).
let tsxRegistered: Promise<unknown> | undefined = import.meta.url.endsWith('.ts')
  ? Promise.resolve()
  : undefined;

export async function importUserModule(file: string): Promise<Record<string, unknown>> {
  if (TYPESCRIPT.test(file)) await (tsxRegistered ??= registerTsx());
  return (await import(pathToFileURL(file).href)) as Record<string, unknown>;
}

async function registerTsx(): Promise<void> {
  const { register } = await import('tsx/esm/api');
  register();
}
