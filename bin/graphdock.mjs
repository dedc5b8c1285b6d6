#!/usr/bin/env node
// The `graphdock` command. TypeScript sources (ours and the user's graphs) load through tsx,
// so a checkout runs after `npm install` with no build step.
import { register } from 'tsx/esm/api';

register();
// The operator loads only its own modules (not the runtime's LangGraph stack): less memory.
const { main } =
  process.argv[2] === 'operator'
    ? await import('../cli/operator-main.ts')
    : await import('../cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
