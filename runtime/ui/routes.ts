// Generative UI as the official servers serve it: `POST /ui/{graph_id}` answers the HTML that
// `LoadExternalComponent` puts in a shadow root (stylesheet links and a script whose `onload`
// renders the named component), and `GET /ui/{graph_id}/{file}` serves those files.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errorResponses, notFound } from '../../common/errors/index.js';
import type { UiBundle } from './bundler.js';

const tags = ['UI'];
const GraphParams = z.object({ graph_id: z.string() });

/** Loopback hosts get an explicit `http:`: a page served over https could not load them otherwise. */
function originOf(host: string): string {
  const name = host.replace(/:\d+$/, '');
  const loopback = name === 'localhost' || name === '127.0.0.1' || name === '[::1]';
  return `${loopback ? 'http:' : ''}//${host}`;
}

const escapeAttr = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/'/g, '&#39;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

export function uiRoutes(
  bundles: Map<string, UiBundle>,
  mountPrefix: string,
): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(
      '/ui/:graph_id',
      {
        schema: {
          tags,
          summary: 'The HTML that loads a UI component of a graph',
          params: GraphParams,
          body: z.object({ name: z.string() }),
          response: {
            200: {
              description: 'Stylesheet links and a script that renders the component',
              content: { 'text/html': { schema: z.string() } },
            },
            ...errorResponses('NOT_FOUND'),
          },
        },
      },
      async (req, reply) => {
        const bundle = bundles.get(req.params.graph_id);
        if (!bundle) throw notFound(`UI not found for graph "${req.params.graph_id}"`);
        const base = `${originOf(req.host)}${mountPrefix}/ui/${encodeURIComponent(bundle.graphId)}`;
        const html = bundle.assets
          .filter((a) => a.basename.endsWith('.css'))
          .map((a) => `<link rel="stylesheet" href="${escapeAttr(`${base}/${a.basename}`)}" />`);
        const script = bundle.assets.find((a) => a.basename.endsWith('.js'));
        if (script) {
          // `{{shadowRootId}}` is filled in by the client before it inserts the HTML.
          const call = `${bundle.globalName}.render(${JSON.stringify(req.body.name)}, "{{shadowRootId}}")`;
          html.push(
            `<script src="${escapeAttr(`${base}/${script.basename}`)}" onload='${escapeAttr(call)}'></script>`,
          );
        }
        return reply.type('text/html; charset=utf-8').send(html.join('\n'));
      },
    );

    app.get(
      '/ui/:graph_id/:basename',
      {
        schema: {
          tags,
          summary: "A file of a graph's UI bundle (no authentication, as on the official server)",
          params: GraphParams.extend({ basename: z.string() }),
          response: {
            200: {
              description: 'JavaScript or CSS',
              content: {
                'text/javascript': { schema: z.string() },
                'text/css': { schema: z.string() },
              },
            },
            ...errorResponses('NOT_FOUND'),
          },
        },
      },
      async (req, reply) => {
        const asset = bundles
          .get(req.params.graph_id)
          ?.assets.find((a) => a.basename === req.params.basename);
        if (!asset) throw notFound('File not found');
        return reply.type(asset.contentType).send(asset.text);
      },
    );
  };
}
