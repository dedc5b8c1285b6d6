// `store` of langgraph.json → the store's settings, loading the embedding function if any.
import type { LoadedConfig } from '../config/index.js';
import { loadEmbedder } from './embeddings.js';
import type { StoreSettings } from './service.js';

export interface StoreRuntimeSettings extends StoreSettings {
  /** How often expired items are deleted; reads already hide them in between. */
  sweepIntervalMs: number;
}

/** The official default: items of every field are embedded as the whole JSON value. */
const DEFAULT_FIELDS = ['$'];
const DEFAULT_SWEEP_MINUTES = 5;

export async function storeSettings(loaded: LoadedConfig): Promise<StoreRuntimeSettings> {
  const { index, ttl } = loaded.config.store ?? {};
  return {
    defaultTtlMinutes: ttl?.default_ttl ?? null,
    refreshOnRead: ttl?.refresh_on_read ?? true,
    sweepIntervalMs: (ttl?.sweep_interval_minutes ?? DEFAULT_SWEEP_MINUTES) * 60_000,
    index: index && {
      dims: index.dims,
      fields: index.fields ?? DEFAULT_FIELDS,
      embedder: await loadEmbedder(index.embed, loaded.dir),
    },
  };
}
