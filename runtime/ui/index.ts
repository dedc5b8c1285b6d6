export { bundleUi, uiGlobalName, UiBundleError, type UiBundle, type UiAsset } from './bundler.js';
export { uiRoutes } from './routes.js';

/**
 * The files of UI bundles are fetched by `<script>` and `<link>` tags, which carry no API key or
 * token: like the official server, they are served without authentication.
 */
export function isUiAsset(method: string, path: string, mountPrefix: string): boolean {
  return (method === 'GET' || method === 'HEAD') && path.startsWith(`${mountPrefix}/ui/`);
}
