// Regenerates the committed artefacts derived from code. A test fails when they drift.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildOpenApiDocument, GRAPHDOCK_VERSION } from '../runtime/index.js';

export const OPENAPI_PATH = join(import.meta.dirname, '..', 'docs', 'openapi.json');

export async function renderOpenApi(): Promise<string> {
  return `${JSON.stringify(await buildOpenApiDocument(GRAPHDOCK_VERSION), null, 2)}\n`;
}

if (process.argv[1] === import.meta.filename) {
  writeFileSync(OPENAPI_PATH, await renderOpenApi());
  console.log(`wrote ${OPENAPI_PATH}`);
}
