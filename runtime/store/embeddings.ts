// The embedding function named by `store.index.embed`, loaded from the user's module the way
// graphs are (`./file.ts:export`), and the text extraction that feeds it.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { getTextAtPath } from '@langchain/langgraph-checkpoint';
import { ConfigFileError, importUserModule } from '../config/index.js';

/** What the store needs from an embedding model; LangChain `Embeddings` objects fit as they are. */
export interface Embedder {
  embedDocuments(texts: string[]): Promise<number[][]>;
  embedQuery(text: string): Promise<number[]>;
}

/** A configuration error: start-up stops with its message, like any bad langgraph.json. */
export class EmbedderLoadError extends ConfigFileError {
  override name = 'EmbedderLoadError';
}

type EmbedFunction = (texts: string[]) => Promise<number[][]> | number[][];

function isEmbedder(value: unknown): value is Embedder {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Embedder).embedDocuments === 'function' &&
    typeof (value as Embedder).embedQuery === 'function'
  );
}

function fromFunction(fn: EmbedFunction): Embedder {
  return {
    embedDocuments: async (texts) => fn(texts),
    embedQuery: async (text) => {
      const [vector] = await fn([text]);
      if (!vector) throw new Error('the embedding function returned no vector');
      return vector;
    },
  };
}

/**
 * Loads `spec` relative to the config file. Provider strings such as `openai:text-embedding-3-small`
 * need a provider integration the runtime does not bundle, so they are refused with a clear error.
 */
export async function loadEmbedder(spec: string, dir: string): Promise<Embedder> {
  const colon = spec.lastIndexOf(':');
  const hasExport = colon > 1;
  const path = hasExport ? spec.slice(0, colon) : spec;
  const exportName = hasExport ? spec.slice(colon + 1) : 'default';
  if (!/[./\\]/.test(path)) {
    throw new EmbedderLoadError(
      `store.index.embed: "${spec}" names an embedding provider; Graphdock loads embedding functions from your code, e.g. "./embeddings.ts:embed"`,
    );
  }
  const file = resolve(dir, path);
  if (!existsSync(file)) throw new EmbedderLoadError(`store.index.embed: file not found: ${file}`);
  let mod: Record<string, unknown>;
  try {
    mod = await importUserModule(file);
  } catch (err) {
    throw new EmbedderLoadError(
      `store.index.embed: failed to load ${file}: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
  const exported = mod[exportName];
  if (isEmbedder(exported)) return exported;
  if (typeof exported === 'function') return fromFunction(exported as EmbedFunction);
  throw new EmbedderLoadError(
    `store.index.embed: export "${exportName}" of ${file} is neither a function (texts: string[]) => number[][] nor an object with embedDocuments and embedQuery`,
  );
}

/** Scales a vector to unit length, so that a dot product is the cosine similarity. */
export function normalise(vector: number[], dims: number): number[] {
  if (vector.length !== dims || vector.some((x) => typeof x !== 'number' || !Number.isFinite(x))) {
    throw new Error(
      `the embedding function returned a vector of ${vector.length} dimensions (or non-finite numbers); store.index.dims is ${dims}`,
    );
  }
  const norm = Math.sqrt(vector.reduce((sum, x) => sum + x * x, 0));
  return norm === 0 ? vector : vector.map((x) => x / norm);
}

/** The texts to embed for an item: every text each field path yields, numbered per path. */
export function textsToEmbed(
  value: Record<string, unknown>,
  fields: string[],
): { field: string; part: number; text: string }[] {
  const out: { field: string; part: number; text: string }[] = [];
  for (const field of fields) {
    getTextAtPath(value, field).forEach((text, part) => out.push({ field, part, text }));
  }
  return out;
}
