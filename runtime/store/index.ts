export { ItemStore } from './store.js';
export { StoreService, type StoreSettings, type StoreIndexSettings } from './service.js';
export { GraphdockStore } from './graph-store.js';
export { storeRoutes } from './routes.js';
export { loadEmbedder, EmbedderLoadError, type Embedder } from './embeddings.js';
export { storeSettings } from './settings.js';
