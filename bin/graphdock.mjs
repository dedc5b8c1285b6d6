#!/usr/bin/env node
// The `graphdock` command. TypeScript sources (ours and the user's graphs) load through tsx,
// so a checkout runs after `npm install` with no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
