// Bundles the components a project names in `ui` of langgraph.json, once at start-up and in
// memory, into what `LoadExternalComponent` (@langchain/langgraph-sdk/react-ui) loads: a classic
// script that sets `__LGUI_<graph>` with a `render(name, shadowRootId)`, plus any CSS it imports.
// React, react-dom, the SDK and `ui_config.shared` are not bundled: the page hands its own
// copies to the script through `globalThis[Symbol.for('LGUI_REQUIRE')]`, so components share the
// page's React.
import { extname, resolve } from 'node:path';
import { build, type Plugin } from 'esbuild';

export interface UiAsset {
  basename: string;
  contentType: string;
  /** JavaScript or CSS. */
  text: string;
}

export interface UiBundle {
  graphId: string;
  /** The global the script assigns: `__LGUI_` and the graph id with non-alphanumerics as `_`. */
  globalName: string;
  assets: UiAsset[];
}

export class UiBundleError extends Error {
  override name = 'UiBundleError';
}

/** Always provided by the page (react-ui's bootstrap); `ui_config.shared` adds to them. */
const PAGE_PROVIDED = ['react', 'react-dom', '@langchain/langgraph-sdk'];
const ENTRY = 'graphdock-ui-entry';
const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

export const uiGlobalName = (graphId: string) => `__LGUI_${graphId.replace(/[^a-zA-Z0-9]/g, '_')}`;

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** A package and its subpaths (`react` → `react/jsx-runtime`) become a lookup on the page. */
function pageModules(shared: string[]): Plugin {
  const names = [...new Set([...PAGE_PROVIDED, ...shared])].map(escapeRegExp);
  const filter = new RegExp(`^(?:${names.join('|')})(?:/.*)?$`);
  return {
    name: 'graphdock-page-modules',
    setup(b) {
      b.onResolve({ filter }, (args) => ({ path: args.path, namespace: 'page-module' }));
      b.onLoad({ filter: /.*/, namespace: 'page-module' }, (args) => ({
        contents: `module.exports = globalThis[Symbol.for("LGUI_REQUIRE")](${JSON.stringify(args.path)});`,
        loader: 'js',
      }));
    },
  };
}

/** The entry point: the project's default export (name → component) behind `render`. */
function entry(componentsFile: string): Plugin {
  return {
    name: 'graphdock-ui-entry',
    setup(b) {
      b.onResolve({ filter: new RegExp(`^${ENTRY}$`) }, () => ({
        path: ENTRY,
        namespace: 'ui-entry',
      }));
      b.onLoad({ filter: /.*/, namespace: 'ui-entry' }, () => ({
        loader: 'js',
        resolveDir: process.cwd(),
        contents: [
          `import components from ${JSON.stringify(componentsFile)};`,
          // react-ui put a host element with this id on the page and gave it a shadow root;
          // the component is portalled into a fresh element inside that root.
          'export function render(name, shadowRootId) {',
          '  const target = document.createElement("div");',
          '  document.getElementById(shadowRootId).shadowRoot.appendChild(target);',
          '  globalThis[Symbol.for("LGUI_EXT_STORE")].respond(shadowRootId, components[name], target);',
          '}',
        ].join('\n'),
      }));
    },
  };
}

async function bundleOne(
  graphId: string,
  componentsFile: string,
  shared: string[],
): Promise<UiBundle> {
  const globalName = uiGlobalName(graphId);
  const result = await build({
    entryPoints: { entrypoint: ENTRY },
    bundle: true,
    write: false,
    // Output paths only name the files; nothing is written.
    outdir: resolve('/graphdock-ui', graphId),
    format: 'iife',
    globalName,
    platform: 'browser',
    target: 'es2020',
    jsx: 'automatic',
    minify: true,
    logLevel: 'silent',
    plugins: [entry(componentsFile), pageModules(shared)],
  }).catch((err: unknown) => {
    const messages = (err as { errors?: { text: string; location?: { file: string } }[] }).errors;
    const detail = messages?.length
      ? messages.map((m) => (m.location ? `${m.location.file}: ${m.text}` : m.text)).join('; ')
      : String(err);
    throw new UiBundleError(`ui.${graphId}: cannot bundle ${componentsFile}: ${detail}`, {
      cause: err,
    });
  });
  const assets = result.outputFiles.map((file) => {
    const basename = file.path.slice(file.path.lastIndexOf('/') + 1);
    return {
      basename,
      contentType: CONTENT_TYPES[extname(basename)] ?? 'application/octet-stream',
      text: file.text,
    };
  });
  return { graphId, globalName, assets };
}

/** Bundles every entry of `ui` (paths relative to the config's folder); any failure throws. */
export async function bundleUi(
  ui: Record<string, string>,
  configDir: string,
  shared: string[] = [],
): Promise<Map<string, UiBundle>> {
  const bundles = await Promise.all(
    Object.entries(ui).map(([graphId, path]) =>
      bundleOne(graphId, resolve(configDir, path), shared),
    ),
  );
  return new Map(bundles.map((b) => [b.graphId, b]));
}
