// Which saved files reload `graphdock dev` (cli/dev-reload.ts): code, JSON and .env files.
import { describe, expect, it } from 'vitest';
import { isWatchedFile } from '../../cli/dev-reload.js';

describe('files that reload graphdock dev', () => {
  it.each([
    'src/agent.ts',
    'src/agent.tsx',
    'src/tools.mts',
    'src/tools.cts',
    'lib/graph.js',
    'lib/graph.mjs',
    'lib/graph.cjs',
    'ui/Card.jsx',
    'langgraph.json',
    'package.json',
    '.env',
    '.env.local',
    '/abs/project/.env.production',
  ])('reloads on %s', (path) => expect(isWatchedFile(path)).toBe(true));

  it.each([
    'README.md',
    'notes.txt',
    'data.csv',
    'image.png',
    'agent.ts.swp',
    'agent.ts~',
    'env',
    'my.env',
  ])('does not reload on %s', (path) => expect(isWatchedFile(path)).toBe(false));
});
