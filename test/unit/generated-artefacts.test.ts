import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { OPENAPI_PATH, renderOpenApi } from '../../scripts/generate.js';

describe('generated artefacts', () => {
  it('docs/openapi.json matches the routes and schemas (run `npm run generate` after changing them)', async () => {
    expect(readFileSync(OPENAPI_PATH, 'utf8')).toBe(await renderOpenApi());
  });
});
