#!/usr/bin/env node
// The `graphdock` command. In a checkout the TypeScript sources load through tsx, so it runs after
// `npm install` with no build step; `npm run build` puts a copy of this script in dist/bin beside
// the bundle (dist/cli/*.js), and there (as in the image) it runs it with plain node.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { enableCompileCache, enableResolutionCache } from './module-caches.mjs';

const compiled = existsSync(join(import.meta.dirname, '..', 'cli', 'main.js'));
// Before anything else loads. A build's compile cache lives beside it (the image fills /app's
// while it is built); the sources, transformed by tsx at every start, keep none unless asked.
enableCompileCache(
  process.env,
  compiled ? join(import.meta.dirname, '..', 'compile-cache') : undefined,
);
enableResolutionCache(process.env);
const operator = process.argv[2] === 'operator';
if (!compiled) {
  if (operator) {
    // Loaded by Node itself before tsx's hooks exist, these large packages skip tsx's loader:
    // about 70 MB less resident memory for the long-running operator.
    for (const name of ['@kubernetes/client-node', 'zod', 'pg', 'prom-client', 'pino'])
      await import(name);
  }
  const { register } = await import('tsx/esm/api');
  register();
}
const ext = compiled ? 'js' : 'ts';
// The operator and the image commands load only their own modules (not the runtime's LangGraph
// stack).
const image = process.argv[2] === 'dockerfile' || process.argv[2] === 'build';
const { main } = await import(
  operator
    ? `../cli/operator-main.${ext}`
    : image
      ? `../cli/image-commands.${ext}`
      : `../cli/main.${ext}`
);
process.exitCode = await main(process.argv.slice(2));
