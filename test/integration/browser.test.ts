// Browser clients: a page on another origin, in real headless Chromium, uses the official SDK
// (its Client, and the React `useStream` hook configured as Agent Chat UI configures it) against
// the server. Every call is cross-origin, so a response without the CORS headers fails in the
// page with "Failed to fetch", whatever the server did.
import type { Client } from '@langchain/langgraph-sdk';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bundleForBrowser,
  launchChromium,
  servePage,
  type PageOrigin,
} from '../support/browser.js';
import { useRuntime } from '../support/fixture.js';

const API_KEY = 'browser-test-key';
const rt = useRuntime({ env: { GRAPHDOCK_API_KEYS: API_KEY, GRAPHDOCK_SLOW_STEP_MS: '400' } });

interface ChatMessage {
  id?: string;
  type: string;
  content: unknown;
}
interface HistoryState {
  checkpoint: { checkpoint_id: string };
  parent_checkpoint?: { checkpoint_id: string } | null;
  metadata?: { source?: string } | null;
}
/** The part of `useStream`'s result that the test uses. */
interface Chat {
  messages: ChatMessage[];
  isLoading: boolean;
  isThreadLoading: boolean;
  error: unknown;
  interrupt?: { value?: unknown };
  history: HistoryState[];
  submit(values: unknown, options?: unknown): Promise<void>;
  setBranch(branch: string): void;
  getMessagesMetadata(
    message: ChatMessage,
    index?: number,
  ):
    | {
        branch?: string;
        branchOptions?: string[];
        firstSeenState?: { parent_checkpoint?: unknown };
      }
    | undefined;
}
interface PageApi {
  Client: typeof Client;
  chat?: Chat;
  threadId: string | null;
  mountChat(options: { apiUrl: string; apiKey: string; assistantId: string }): void;
}

let browser: Browser;
let origin: PageOrigin;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  const [script, launched] = await Promise.all([
    bundleForBrowser('test/browser/app.ts'),
    launchChromium(),
  ]);
  browser = launched;
  origin = await servePage(script);
  page = await browser.newPage();
  page.on('pageerror', (err) => pageErrors.push(err.message));
  page.on('console', (msg) => {
    if (msg.type() === 'error') pageErrors.push(msg.text());
  });
  await page.goto(origin.url);
  await page.waitForFunction(() => 'graphdock' in globalThis);
}, 15 * 60_000);

afterAll(async () => {
  await browser?.close();
  await origin?.close();
});

const hi = (text: string) => ({
  messages: [{ type: 'human', content: [{ type: 'text', text }] }],
});

describe('CORS on every kind of response', () => {
  const fromPage = () => ({ Origin: origin.url });

  it('answers a preflight for every method the API uses, and for private network access', async () => {
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
      const res = await rt.http('/threads/00000000-0000-0000-0000-000000000000', {
        method: 'OPTIONS',
        headers: {
          ...fromPage(),
          'Access-Control-Request-Method': method,
          'Access-Control-Request-Headers': 'content-type,x-api-key',
          'Access-Control-Request-Private-Network': 'true',
        },
      });
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('access-control-allow-methods')).toContain(method);
      expect(res.headers.get('access-control-allow-private-network')).toBe('true');
    }
  });

  it('sends the headers on streams, errors and JSON alike', async () => {
    const auth = { ...fromPage(), 'x-api-key': API_KEY };
    const stream = await rt.http('/runs/stream', {
      method: 'POST',
      headers: auth,
      json: { assistant_id: 'echo', input: hi('x') },
    });
    await stream.text();
    const unauthorized = await rt.http('/threads/search', { method: 'POST', headers: fromPage() });
    const missing = await rt.http('/threads/00000000-0000-0000-0000-000000000000', {
      headers: auth,
    });
    const json = await rt.http('/threads', { method: 'POST', headers: auth, json: {} });
    expect([stream.status, unauthorized.status, missing.status, json.status]).toEqual([
      200, 401, 404, 200,
    ]);
    for (const res of [stream, unauthorized, missing, json]) {
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('access-control-expose-headers')).toContain('content-location');
    }
    expect(stream.headers.get('content-type')).toContain('text/event-stream');
    expect(stream.headers.get('content-location')).toMatch(/^\/runs\/[0-9a-f-]{36}$/);
  });
});

describe('the official SDK Client in a browser page', () => {
  it('creates, streams, joins, resumes, patches and deletes across origins', async () => {
    const result = await page.evaluate(
      async ({ apiUrl, apiKey, input }) => {
        const { Client } = (globalThis as unknown as { graphdock: PageApi }).graphdock;
        const client = new Client({ apiUrl, apiKey });
        const thread = await client.threads.create({ metadata: { from: 'browser' } });
        const threadId = thread.thread_id;

        // A streamed run; its id arrives through the exposed Content-Location header.
        let createdRunId: string | undefined;
        const streamed: string[] = [];
        let lastValues: { messages?: ChatMessage[] } = {};
        for await (const part of client.runs.stream(threadId, 'agent', {
          input,
          streamMode: ['values', 'messages-tuple'],
          onRunCreated: ({ run_id }) => (createdRunId = run_id),
        })) {
          streamed.push(part.event);
          if (part.event === 'values') lastValues = part.data as typeof lastValues;
        }

        // Joining the stream of a background run.
        const background = await client.runs.create(threadId, 'slow', { input });
        const joined: string[] = [];
        for await (const part of client.runs.joinStream(threadId, background.run_id))
          joined.push(part.event);
        const backgroundRun = await client.runs.get(threadId, background.run_id);

        // An interrupt, resumed with `command.resume`.
        const other = await client.threads.create();
        for await (const part of client.runs.stream(other.thread_id, 'interrupt', {
          input,
          streamMode: 'values',
        }))
          void part;
        const waiting = await client.threads.get(other.thread_id);
        const resumed = (await client.runs.wait(other.thread_id, 'interrupt', {
          command: { resume: 'yes' },
        })) as { messages: ChatMessage[]; approved: boolean };

        // PATCH and DELETE need a preflight that allows them.
        const patched = await client.threads.update(threadId, { metadata: { patched: true } });
        await client.threads.delete(threadId);
        const afterDelete = await client.threads.get(threadId).then(
          () => 'still there',
          (err: { status?: number }) => err.status,
        );
        const wrongKey = await new Client({ apiUrl, apiKey: 'wrong' }).threads.search().then(
          () => 'accepted',
          (err: { status?: number }) => err.status,
        );
        return {
          createdRunId,
          streamed,
          finalMessages: (lastValues.messages ?? []).map((m) => [m.type, m.content]),
          joined,
          backgroundStatus: backgroundRun.status,
          waitingStatus: waiting.status,
          resumedLast: resumed.messages.at(-1)?.content,
          approved: resumed.approved,
          patchedMetadata: patched.metadata,
          afterDelete,
          wrongKey,
        };
      },
      { apiUrl: rt.url, apiKey: API_KEY, input: hi('hello there') },
    );

    expect(result.createdRunId).toMatch(/^[0-9a-f-]{36}$/);
    expect(result.streamed).toContain('messages');
    expect(result.finalMessages).toEqual([
      ['human', [{ type: 'text', text: 'hello there' }]],
      ['ai', 'You said: hello there'],
    ]);
    expect(result.joined).toContain('values');
    expect(result.backgroundStatus).toBe('success');
    expect(result.waitingStatus).toBe('interrupted');
    expect(result.resumedLast).toBe('Review: yes');
    expect(result.approved).toBe(true);
    expect(result.patchedMetadata).toMatchObject({ from: 'browser', patched: true });
    expect(result.afterDelete).toBe(404);
    expect(result.wrongKey).toBe(401);
    expect(pageErrors.filter((e) => e.includes('CORS'))).toEqual([]);
  });
});

describe('a chat built on useStream, as Agent Chat UI builds it', () => {
  const mount = (assistantId: string) =>
    page.evaluate(
      (options) => {
        (globalThis as unknown as { graphdock: PageApi }).graphdock.mountChat(options);
      },
      {
        apiUrl: rt.url,
        apiKey: API_KEY,
        assistantId,
      },
    );

  /** Submits in the page and waits until the chat has settled with its history reloaded. */
  const submit = async (values: unknown, options?: unknown) => {
    await page.evaluate(
      async ({ values, options }) => {
        const api = (globalThis as unknown as { graphdock: PageApi }).graphdock;
        await api.chat!.submit(values, options);
      },
      { values, options },
    );
    await page.waitForFunction(() => {
      const chat = (globalThis as unknown as { graphdock: PageApi }).graphdock.chat;
      return chat !== undefined && !chat.isLoading && !chat.isThreadLoading;
    });
  };

  const snapshot = () =>
    page.evaluate(() => {
      const api = (globalThis as unknown as { graphdock: PageApi }).graphdock;
      const chat = api.chat!;
      return {
        threadId: api.threadId,
        error:
          chat.error instanceof Error
            ? chat.error.message
            : chat.error
              ? JSON.stringify(chat.error)
              : null,
        interrupt: chat.interrupt?.value ?? null,
        messages: chat.messages.map((m) => ({
          type: m.type,
          content: m.content,
          branchOptions: chat.getMessagesMetadata(m)?.branchOptions ?? [],
        })),
        history: chat.history.map((h) => ({
          id: h.checkpoint.checkpoint_id,
          parent: h.parent_checkpoint?.checkpoint_id ?? null,
          source: h.metadata?.source ?? null,
        })),
      };
    });
  const texts = (s: Awaited<ReturnType<typeof snapshot>>) =>
    s.messages.map((m) =>
      typeof m.content === 'string'
        ? `${m.type}: ${m.content}`
        : `${m.type}: ${(m.content as { text: string }[]).map((b) => b.text).join('')}`,
    );

  it('chats, then edits a message into a branch and switches between branches', async () => {
    await mount('agent');
    await submit(hi('hello there'));
    await submit(hi('and again'));
    let state = await snapshot();
    expect(state.error).toBeNull();
    expect(texts(state)).toEqual([
      'human: hello there',
      'ai: You said: hello there',
      'human: and again',
      'ai: You said: and again',
    ]);

    // Agent Chat UI's edit: submit from the checkpoint before the message first appeared.
    await page.evaluate(async (edited) => {
      const chat = (globalThis as unknown as { graphdock: PageApi }).graphdock.chat!;
      const message = chat.messages[2]!;
      const meta = chat.getMessagesMetadata(message, 2);
      await chat.submit(
        { messages: [{ type: 'human', content: edited }] },
        { checkpoint: meta?.firstSeenState?.parent_checkpoint },
      );
    }, 'edited instead');
    await page.waitForFunction(() => {
      const chat = (globalThis as unknown as { graphdock: PageApi }).graphdock.chat;
      return chat !== undefined && !chat.isLoading && !chat.isThreadLoading;
    });
    state = await snapshot();
    expect(texts(state)).toEqual([
      'human: hello there',
      'ai: You said: hello there',
      'human: edited instead',
      'ai: You said: edited instead',
    ]);
    expect(state.messages[2]!.branchOptions).toHaveLength(2);

    const [first] = state.messages[2]!.branchOptions;
    await page.evaluate((branch) => {
      (globalThis as unknown as { graphdock: PageApi }).graphdock.chat!.setBranch(branch);
    }, first!);
    await page.waitForFunction(() => {
      const chat = (globalThis as unknown as { graphdock: PageApi }).graphdock.chat!;
      return (
        chat.messages.length === 4 &&
        JSON.stringify(chat.messages[2]!.content).includes('and again')
      );
    });
  });

  it('stops at an interrupt, resumes it, and takes a new message while interrupted', async () => {
    await mount('interrupt');
    await submit(hi('please review'));
    let state = await snapshot();
    expect(state.interrupt).toEqual({ question: 'Approve the draft?' });
    const interrupted = state.history.at(-1)!;

    // A new message while the thread waits: the UI sends the thread head's checkpoint, and the
    // run starts from the interrupted checkpoint, as on the official server.
    await submit(hi('start over'));
    state = await snapshot();
    const input = state.history.find((h) => h.parent === interrupted.id);
    expect(input?.source).toBe('input');
    expect(state.interrupt).toEqual({ question: 'Approve the draft?' });
    expect(texts(state).slice(-2)).toEqual(['human: start over', 'ai: Draft ready for review.']);

    await submit(undefined, { command: { resume: 'no' } });
    state = await snapshot();
    expect(state.interrupt).toBeNull();
    expect(texts(state).at(-1)).toBe('ai: Review: no');
    expect(state.error).toBeNull();
  });
});
