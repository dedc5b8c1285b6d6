import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CONTROL_PLANE_OPENAPI_PATH,
  CRDS_DIR,
  OPENAPI_PATH,
  renderControlPlaneOpenApi,
  renderCrds,
  renderOpenApi,
} from '../../scripts/generate.js';

describe('generated artefacts', () => {
  it('docs/openapi.json matches the routes and schemas (run `npm run generate` after changing them)', async () => {
    expect(readFileSync(OPENAPI_PATH, 'utf8')).toBe(await renderOpenApi());
  });

  it('docs/control-plane-openapi.json matches the control-plane routes (run `npm run generate`)', async () => {
    expect(readFileSync(CONTROL_PLANE_OPENAPI_PATH, 'utf8')).toBe(
      await renderControlPlaneOpenApi(),
    );
  });

  it('crds/*.yaml match the zod schemas in common/resources (run `npm run generate`)', () => {
    const rendered = renderCrds();
    expect(readdirSync(CRDS_DIR).sort()).toEqual([...rendered.keys()].sort());
    for (const [name, text] of rendered) {
      expect(readFileSync(join(CRDS_DIR, name), 'utf8'), name).toBe(text);
    }
  });
});
