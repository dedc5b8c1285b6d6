// Reads `langgraph.json`, validates it, and applies its `env` key to the process.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parse as parseDotenv } from 'dotenv';
import { LanggraphConfigSchema, type LanggraphConfig } from './schema.js';
import { unbuiltSettings } from './unbuilt.js';

export class ConfigFileError extends Error {
  override name = 'ConfigFileError';
}

export interface LoadedConfig {
  path: string;
  dir: string;
  config: LanggraphConfig;
}

export function loadLanggraphConfig(path: string): LoadedConfig {
  const absolute = resolve(path);
  if (!existsSync(absolute)) throw new ConfigFileError(`config file not found: ${absolute}`);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(absolute, 'utf8'));
  } catch (err) {
    throw new ConfigFileError(`${absolute}: not valid JSON: ${(err as Error).message}`);
  }
  const parsed = LanggraphConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const keys = 'keys' in issue && Array.isArray(issue.keys) ? issue.keys.map(String) : [];
      const at = [...issue.path.map(String), ...keys].join('.') || '(root)';
      return `${at}: ${issue.message}`;
    });
    throw new ConfigFileError(`${absolute}: invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const unbuilt = unbuiltSettings(parsed.data);
  if (unbuilt.length)
    throw new ConfigFileError(`${absolute}: unsupported settings:\n  ${unbuilt.join('\n  ')}`);
  return { path: absolute, dir: dirname(absolute), config: parsed.data };
}

/** Values from `env` never override variables the process already has. */
export function applyConfigEnv(loaded: LoadedConfig, env: NodeJS.ProcessEnv = process.env): void {
  const source = loaded.config.env;
  if (source === undefined) return;
  let values: Record<string, string>;
  if (typeof source === 'string') {
    const file = resolve(loaded.dir, source);
    if (!existsSync(file)) throw new ConfigFileError(`env file not found: ${file}`);
    values = parseDotenv(readFileSync(file));
  } else if (Array.isArray(source)) {
    // The array form names variables that must come from the environment.
    const missing = source.filter((name) => env[name] === undefined);
    if (missing.length)
      throw new ConfigFileError(`missing environment variables: ${missing.join(', ')}`);
    return;
  } else {
    values = source;
  }
  for (const [key, value] of Object.entries(values)) env[key] ??= value;
}
