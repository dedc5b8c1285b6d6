// Caches for Node's module loader, set up by bin/graphdock.mjs before any other module of
// Graphdock loads. A runtime's start is mostly loading modules (the LangChain stack alone is some
// 600 files that every graph imports), and both caches only skip work whose result they already
// hold: what is loaded, and from where, does not change.
import module from 'node:module';
import { URL } from 'node:url';

/**
 * V8's on-disk compile cache (Node.js 22.1+): modules compiled by an earlier start are not
 * compiled again. `NODE_COMPILE_CACHE` (a directory) and `NODE_DISABLE_COMPILE_CACHE=1` are
 * Node's own settings and win; otherwise `defaultDir` is used when given (the compiled build's
 * `compile-cache/`, filled while the image is built). Node keeps one subfolder per Node.js release
 * and user id, and goes on without a cache where the folder cannot be created or written.
 * Returns the folder in use, or undefined.
 * @param {Record<string, string | undefined>} env
 * @param {string | undefined} defaultDir
 * @returns {string | undefined}
 */
export function enableCompileCache(env, defaultDir) {
  // Node.js 20 has none.
  if (typeof module.enableCompileCache !== 'function') return undefined;
  if (env.NODE_DISABLE_COMPILE_CACHE) return undefined;
  const dir = env.NODE_COMPILE_CACHE || defaultDir;
  if (!dir) return undefined;
  const result = module.enableCompileCache(dir);
  const { ENABLED, ALREADY_ENABLED } = module.constants.compileCacheStatus;
  return result.status === ENABLED || result.status === ALREADY_ENABLED
    ? (result.directory ?? dir)
    : undefined;
}

/**
 * Key under which the resolution of `specifier` from a module inside node_modules can be reused,
 * or undefined when it is not cached. Node resolves every import statement on its own, and each
 * resolution re-reads the package's `package.json` (parsing its whole `exports` map, 18 KB for
 * `@langchain/core`) to find the file's module type: about a third of the LangChain stack's import
 * time. A relative specifier resolves to the same file from every importer, a bare one (or a
 * `#import`) the same from every importer in one folder (node_modules lookup and package scope
 * both go by folder); the conditions (import or require) are part of both keys. Graphs and other
 * user code outside node_modules, URLs, absolute paths and imports with attributes are left alone.
 * @param {string} specifier
 * @param {{ parentURL?: string | undefined, conditions?: readonly string[], importAttributes?: Record<string, string> }} context
 * @returns {string | undefined}
 */
export function resolutionKey(specifier, context) {
  const parent = context.parentURL;
  if (!parent?.startsWith('file:') || !parent.includes('/node_modules/')) return undefined;
  if (context.importAttributes && Object.keys(context.importAttributes).length) return undefined;
  const conditions = (context.conditions ?? []).join(',');
  if (specifier.startsWith('./') || specifier.startsWith('../'))
    return `file\0${new URL(specifier, parent).href}\0${conditions}`;
  // `node:fs`, `file:///…`, `data:…`, `/abs/path`, `.` and `..`: left to Node.
  if (/^[a-zA-Z][a-zA-Z\d+.-]*:/.test(specifier) || /^\.{0,2}(\/|$)/.test(specifier))
    return undefined;
  return `bare\0${parent.slice(0, parent.lastIndexOf('/') + 1)}\0${specifier}\0${conditions}`;
}

/**
 * Reuses resolutions by resolutionKey() for the life of the process, through a synchronous
 * module hook (`module.registerHooks`, Node.js 22.15+; nothing on older releases). A resolution
 * that fails is not kept. Returns whether the hook is installed.
 * @param {Record<string, string | undefined>} env
 * @returns {boolean}
 */
export function enableResolutionCache(env) {
  if (typeof module.registerHooks !== 'function') return false;
  if (env.GRAPHDOCK_RESOLUTION_CACHE === 'false') return false;
  /** @type {Map<string, object>} */
  const resolved = new Map();
  module.registerHooks({
    resolve(specifier, context, nextResolve) {
      const key = resolutionKey(specifier, context);
      if (key === undefined) return nextResolve(specifier, context);
      const known = resolved.get(key);
      if (known) return { ...known, shortCircuit: true };
      const result = nextResolve(specifier, context);
      resolved.set(key, result);
      return result;
    },
  });
  return true;
}
