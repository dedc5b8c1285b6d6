// The OpenAPI document the server publishes, and the answers of the HTTP layer it describes:
// a valid document whose every $ref resolves, the errors each operation raises declared, 405 for
// a method a path does not have, and 422 messages that name the right place and the choices.
// (Every status the integration tests observe is checked against the document after the run:
// see test/support/global-setup.ts.)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { useRuntime } from '../support/fixture.js';
import { ensurePythonVenv, FUZZ_VENV } from '../support/python.js';

interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}
interface Document {
  components: { schemas: Record<string, unknown> };
  paths: Record<string, Record<string, Operation>>;
}

const rt = useRuntime();
let doc: Document;
beforeAll(async () => {
  doc = (await (await rt.http('/openapi.json')).json()) as Document;
});

function refs(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(refs);
  if (!value || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) =>
    k === '$ref' && typeof v === 'string' ? [v] : refs(v),
  );
}

const statuses = (method: string, path: string) =>
  Object.keys(doc.paths[path]?.[method]?.responses ?? {});

describe('the OpenAPI document', () => {
  it('resolves every $ref to a schema in components.schemas', () => {
    const all = refs(doc);
    expect(all.length).toBeGreaterThan(10);
    const missing = all.filter(
      (ref) => !(ref.replace('#/components/schemas/', '') in doc.components.schemas),
    );
    expect([...new Set(missing)]).toEqual([]);
    expect(Object.keys(doc.components.schemas)).toEqual(
      expect.arrayContaining(['Assistant', 'Thread', 'Cron', 'Item', 'Error']),
    );
  });

  it('is valid by openapi-spec-validator', async () => {
    const python = await ensurePythonVenv(FUZZ_VENV);
    const dir = mkdtempSync(join(tmpdir(), 'graphdock-openapi-'));
    try {
      const file = join(dir, 'openapi.json');
      writeFileSync(file, JSON.stringify(doc));
      const result = await run(python, ['-m', 'openapi_spec_validator', file]);
      // The validator quotes the whole document on failure: its first lines are enough.
      expect(result.code, result.output.slice(0, 2000)).toBe(0);
      expect(result.output.slice(0, 2000)).toContain('OK');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 600_000);

  it('declares the errors each operation raises, with the error body', () => {
    expect(statuses('get', '/threads/{thread_id}')).toEqual(
      expect.arrayContaining(['200', '404', '422']),
    );
    expect(statuses('post', '/threads')).toEqual(expect.arrayContaining(['200', '409', '422']));
    expect(statuses('delete', '/threads/{thread_id}')).toEqual(
      expect.arrayContaining(['204', '404']),
    );
    expect(statuses('post', '/threads/{thread_id}/runs')).toEqual(
      expect.arrayContaining(['200', '404', '409', '422']),
    );
    expect(statuses('post', '/threads/{thread_id}/runs/{run_id}/cancel')).toEqual(
      expect.arrayContaining(['202', '204', '404']),
    );
    expect(statuses('post', '/assistants')).toEqual(expect.arrayContaining(['404', '409']));
    const notFound = doc.paths['/assistants/{assistant_id}']?.get?.responses['404'];
    expect(notFound?.content?.['application/json']?.schema).toEqual({
      $ref: '#/components/schemas/Error',
    });
    // Streams are declared as what they are.
    expect(Object.keys(doc.paths['/runs/stream']?.post?.responses['200']?.content ?? {})).toEqual([
      'text/event-stream',
    ]);
  });
});

describe('a method a path does not have', () => {
  it('is 405 with the methods it has in Allow, not 404', async () => {
    const res = await rt.http('/threads', { method: 'PUT', json: {} });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');

    const thread = await rt.client.threads.create();
    const one = await rt.http(`/threads/${thread.thread_id}`, { method: 'PUT', json: {} });
    expect(one.status).toBe(405);
    expect(one.headers.get('allow')?.split(', ').sort()).toEqual([
      'DELETE',
      'GET',
      'HEAD',
      'PATCH',
    ]);

    // A path that does not exist at all stays 404.
    expect((await rt.http('/no/such/path', { method: 'PUT', json: {} })).status).toBe(404);
  });
});

describe('422 messages', () => {
  it('name the body for a bad assistant_id in a run request', async () => {
    const res = await rt.http('/runs/wait', {
      method: 'POST',
      json: { assistant_id: 42, input: {} },
    });
    expect(res.status).toBe(422);
    const { detail } = (await res.json()) as { detail: { loc: string[]; msg: string }[] };
    expect(detail).toHaveLength(1);
    expect(detail[0]?.loc).toEqual(['body', 'assistant_id']);
    // A well-formed name of no assistant is not a bad value but a missing assistant.
    const missing = await rt.http('/runs/wait', {
      method: 'POST',
      json: { assistant_id: 'no such graph!', input: {} },
    });
    expect(missing.status).toBe(404);
  });

  it('list the valid modes for an invalid stream_mode, given alone or in a list', async () => {
    for (const stream_mode of ['bogus', ['values', 'bogus']]) {
      const res = await rt.http('/runs/wait', {
        method: 'POST',
        json: { assistant_id: 'echo', input: {}, stream_mode },
      });
      expect(res.status).toBe(422);
      const { detail } = (await res.json()) as { detail: { loc: string[]; msg: string }[] };
      expect(detail).toHaveLength(1);
      expect(detail[0]?.loc).toEqual(['body', 'stream_mode']);
      for (const mode of ['values', 'updates', 'messages-tuple', 'events', 'debug'])
        expect(detail[0]?.msg).toContain(`"${mode}"`);
    }
  });

  it('report a bad limit once, with the bound it breaks', async () => {
    const thread = await rt.client.threads.create();
    const answers = [
      await rt.http('/threads/search', { method: 'POST', json: { limit: 1e30 } }),
      await rt.http(`/threads/${thread.thread_id}/runs?limit=1e30`),
    ];
    for (const res of answers) {
      expect(res.status).toBe(422);
      const { detail } = (await res.json()) as { detail: { loc: string[]; msg: string }[] };
      expect(detail).toHaveLength(1);
      expect(detail[0]?.loc[1]).toBe('limit');
      expect(detail[0]?.msg).toContain('1000');
    }
  });
});

function run(command: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}
