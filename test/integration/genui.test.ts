// Generative UI (`ui` in langgraph.json): the server bundles the project's React components at
// start-up and serves them as the official servers do, and a page in real headless Chromium on
// another origin runs the graph through the SDK's `useStream`, gets the `ui` message from the
// custom stream and renders the component with `LoadExternalComponent`.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bundleForBrowser,
  launchChromium,
  servePage,
  type PageOrigin,
} from '../support/browser.js';
import { useRuntime } from '../support/fixture.js';
import { REPO_ROOT, runCli } from '../support/server.js';

const FIXTURE = join(REPO_ROOT, 'test', 'fixtures', 'genui');
const API_KEY = 'genui-test-key';
const rt = useRuntime({
  config: join(FIXTURE, 'langgraph.json'),
  env: { GRAPHDOCK_API_KEYS: API_KEY },
});
const withKey = { 'x-api-key': API_KEY };

interface PageApi {
  chat?: { isLoading: boolean; submit(values: unknown): Promise<void> };
  customEvents: unknown[];
  mount(options: { apiUrl: string; apiKey: string; assistantId: string }): void;
}

describe('the UI routes', () => {
  it('answers the HTML that loads a component, behind the API key', async () => {
    const res = await rt.http('/ui/weather', {
      method: 'POST',
      headers: withKey,
      json: { name: 'weather' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const html = await res.text();
    // A loopback host gets an explicit scheme, so an https page could load it too.
    const origin = rt.url;
    expect(html).toContain(`<link rel="stylesheet" href="${origin}/ui/weather/entrypoint.css" />`);
    expect(html).toContain(`<script src="${origin}/ui/weather/entrypoint.js"`);
    expect(html).toContain(
      `onload='__LGUI_weather.render(&quot;weather&quot;, &quot;{{shadowRootId}}&quot;)'`,
    );

    const anonymous = await rt.http('/ui/weather', { method: 'POST', json: { name: 'weather' } });
    expect(anonymous.status).toBe(401);
    const unknown = await rt.http('/ui/nope', {
      method: 'POST',
      headers: withKey,
      json: { name: 'weather' },
    });
    expect(unknown.status).toBe(404);
    const noName = await rt.http('/ui/weather', { method: 'POST', headers: withKey, json: {} });
    expect(noName.status).toBe(422);
  });

  it('serves the bundle without a key (script and link tags carry none)', async () => {
    const js = await rt.http('/ui/weather/entrypoint.js');
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toContain('text/javascript');
    const code = await js.text();
    expect(code).toMatch(/^var __LGUI_weather=/);
    // React comes from the page; the shared package too.
    expect(code).toContain('LGUI_REQUIRE');
    expect(code).toContain('"@graphdock-test/units"');
    expect(code).not.toContain('useSyncExternalStore');
    const css = await rt.http('/ui/weather/entrypoint.css');
    expect(css.headers.get('content-type')).toContain('text/css');
    expect(await css.text()).toContain('.weather-card');
    expect((await rt.http('/ui/weather/other.js')).status).toBe(404);
    expect((await rt.http('/ui/nope/entrypoint.js')).status).toBe(404);
  });

  it('streams the ui message in custom mode and keeps it in the state', async () => {
    const thread = await rt.client.threads.create();
    const custom: unknown[] = [];
    for await (const part of rt.client.runs.stream(thread.thread_id, 'weather', {
      input: { messages: [{ type: 'human', content: 'Oslo' }] },
      streamMode: 'custom',
    }))
      if (part.event === 'custom') custom.push(part.data);
    const expected = {
      type: 'ui',
      name: 'weather',
      props: { city: 'Oslo', celsius: 21 },
      metadata: expect.objectContaining({ message_id: 'forecast-Oslo' }) as unknown,
    };
    expect(custom).toEqual([expect.objectContaining(expected)]);
    const state = await rt.client.threads.getState<{ ui: unknown[] }>(thread.thread_id);
    expect(state.values.ui).toEqual([expect.objectContaining(expected)]);
  });
});

describe('a page rendering the component with LoadExternalComponent', () => {
  let browser: Browser;
  let origin: PageOrigin;
  let page: Page;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    const [script, launched] = await Promise.all([
      bundleForBrowser('test/browser/genui.ts'),
      launchChromium(),
    ]);
    browser = launched;
    origin = await servePage(script);
    page = await browser.newPage();
    page.on('pageerror', (err) => pageErrors.push(err.message));
    page.on('console', (msg) => {
      // The page origin has no favicon; every other failure counts.
      const where = msg.location().url;
      if (msg.type() === 'error' && !where.endsWith('/favicon.ico'))
        pageErrors.push(`${msg.text()} (${where})`);
    });
    await page.goto(origin.url);
    await page.waitForFunction(() => 'graphdockUi' in globalThis);
  }, 15 * 60_000);

  afterAll(async () => {
    await browser?.close();
    await origin?.close();
  });

  it("renders the streamed component, styled, and live on the page's React", async () => {
    await page.evaluate(
      async ({ apiUrl, apiKey }) => {
        const api = (globalThis as unknown as { graphdockUi: PageApi }).graphdockUi;
        api.mount({ apiUrl, apiKey, assistantId: 'weather' });
        while (!api.chat) await new Promise((r) => setTimeout(r, 10));
        await api.chat.submit({ messages: [{ type: 'human', content: 'Porto' }] });
      },
      { apiUrl: rt.url, apiKey: API_KEY },
    );
    // Playwright's CSS locators pierce the open shadow root the component renders in.
    const card = page.locator('.ui-weather .weather-card');
    await card.waitFor({ timeout: 30_000 });
    expect(await card.textContent()).toBe('Porto: 21°Cswitch');
    const color = await card.evaluate(
      (el) =>
        (
          globalThis as unknown as { getComputedStyle(e: unknown): { color: string } }
        ).getComputedStyle(el).color,
    );
    expect(color).toBe('rgb(0, 128, 0)');
    // The component's state hook runs on the page's React; the shared package converts.
    await card.locator('button').click();
    await expect.poll(() => card.textContent()).toBe('Porto: 70°Fswitch');

    const events = await page.evaluate(
      () => (globalThis as unknown as { graphdockUi: PageApi }).graphdockUi.customEvents,
    );
    expect(events).toEqual([
      expect.objectContaining({
        type: 'ui',
        name: 'weather',
        props: { city: 'Porto', celsius: 21 },
      }),
    ]);
    expect(pageErrors).toEqual([]);
  });
});

describe('switches and failures', () => {
  const configWith = (extra: Record<string, unknown>) => {
    const path = join(mkdtempSync(join(tmpdir(), 'gd-genui-')), 'langgraph.json');
    writeFileSync(
      path,
      JSON.stringify({
        graphs: { weather: join(FIXTURE, 'weather.ts:graph') },
        ...extra,
      }),
    );
    return path;
  };

  it('does not start when a component does not build, and names it', async () => {
    const path = configWith({ ui: { weather: join(FIXTURE, 'ui', 'missing.tsx') } });
    const { code, output } = await runCli(['runtime', '--config', path], {
      DATABASE_URL: 'postgres://nowhere.invalid/x',
    });
    expect(code).toBe(1);
    expect(output).toMatch(/ui\.weather: cannot bundle .*missing\.tsx/);
  }, 60_000);
});

describe('http.disable_ui', () => {
  const disabled = useRuntime({
    config: join(FIXTURE, 'langgraph.disabled.json'),
  });

  it('serves no UI routes', async () => {
    const res = await disabled.http('/ui/weather', { method: 'POST', json: { name: 'weather' } });
    expect(res.status).toBe(404);
    expect((await disabled.http('/ui/weather/entrypoint.js')).status).toBe(404);
    // The rest of the API is there.
    expect((await disabled.http('/assistants/search', { method: 'POST', json: {} })).status).toBe(
      200,
    );
  });
});
