export { loadLanggraphConfig, applyConfigEnv, ConfigFileError, type LoadedConfig } from './load.js';
export { LanggraphConfigSchema, type LanggraphConfig, type HttpSettings } from './schema.js';
