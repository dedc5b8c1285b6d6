// Settings of the official schema that Graphdock does not implement stop loading with a message
// naming them, instead of being accepted and ignored.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadLanggraphConfig } from '../../runtime/config/index.js';
import { runCli } from '../support/server.js';

function configFile(extra: Record<string, unknown>) {
  const path = join(mkdtempSync(join(tmpdir(), 'gd-unbuilt-')), 'langgraph.json');
  writeFileSync(path, JSON.stringify({ graphs: {}, ...extra }));
  return path;
}
const load = (extra: Record<string, unknown>) => loadLanggraphConfig(configFile(extra));

describe('settings that are not built', () => {
  it.each([[{ encryption: { path: './enc.ts:enc' } }, 'encryption']])(
    '%j is refused, naming %s',
    (extra, key) => {
      expect(() => load(extra)).toThrow(new RegExp(`\\b${key.replace('.', '\\.')}: not supported`));
    },
  );

  it('accepts turning off features that are not served, and logging_headers', () => {
    const { config } = load({
      http: { disable_mcp: true, disable_ui: true, logging_headers: { includes: ['x-*'] } },
    });
    expect(config.http).toMatchObject({ disable_mcp: true, disable_ui: true });
  });

  it('accepts generative UI: ui, ui_config.shared and disable_ui either way', () => {
    const { config } = load({
      ui: { chat: './ui.tsx' },
      ui_config: { shared: ['@acme/design'] },
      http: { disable_ui: false },
    });
    expect(config.ui_config).toEqual({ shared: ['@acme/design'] });
  });

  it('accepts custom routes and their settings', () => {
    const http = {
      app: './app.ts:app',
      middleware_order: 'auth_first',
      enable_custom_route_auth: true,
    };
    expect(load({ http }).config.http).toMatchObject(http);
  });

  it('accepts serving MCP explicitly (`http.disable_mcp: false`)', () => {
    expect(load({ http: { disable_mcp: false } }).config.http).toMatchObject({
      disable_mcp: false,
    });
  });
});

describe('the server with a setting that is not built', () => {
  it('does not start, and says why', async () => {
    const { code, output } = await runCli(
      ['runtime', '--config', configFile({ encryption: { path: './enc.ts:enc' } })],
      { DATABASE_URL: 'postgres://nowhere.invalid/x' },
    );
    expect(code).toBe(1);
    expect(output).toMatch(/encryption: not supported by Graphdock/);
  }, 30_000);
});
