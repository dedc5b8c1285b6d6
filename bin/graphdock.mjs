#!/usr/bin/env node
// The `graphdock` command. TypeScript sources (ours and the user's graphs) load through tsx,
// so a checkout runs after `npm install` with no build step.
import { register } from 'tsx/esm/api';

const operator = process.argv[2] === 'operator';
if (operator) {
  // Loaded by Node itself before tsx's hooks exist, these large packages skip tsx's loader:
  // about 70 MB less resident memory for the long-running operator.
  for (const name of ['@kubernetes/client-node', 'zod', 'pg', 'prom-client', 'pino'])
    await import(name);
}
register();
// The operator and the image commands load only their own modules (not the runtime's LangGraph
// stack).
const image = process.argv[2] === 'dockerfile' || process.argv[2] === 'build';
const { main } = operator
  ? await import('../cli/operator-main.ts')
  : image
    ? await import('../cli/image-commands.ts')
    : await import('../cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
