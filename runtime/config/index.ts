export { loadLanggraphConfig, applyConfigEnv, ConfigFileError, type LoadedConfig } from './load.js';
export {
  LanggraphConfigSchema,
  type LanggraphConfig,
  type HttpSettings,
  type AuthSettings,
} from './schema.js';
export { importUserModule } from './user-module.js';
