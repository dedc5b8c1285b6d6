// Custom routes and middleware (`http.app`): the project's app mounted in front of the API.
export { CustomAppLoadError, loadCustomApp, type CustomApp } from './load.js';
import type { frontServer } from './front.js';

export type { FrontSettings, Gate } from './front.js';

/** `frontServer`, loaded only when an app is configured: it brings Hono (about 30 modules). */
export async function loadFrontServer(): Promise<typeof frontServer> {
  return (await import('./front.js')).frontServer;
}
