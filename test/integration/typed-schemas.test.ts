// `GET /assistants/{id}/schemas` for graphs that carry no schema at run time (`Annotation`,
// `MessagesAnnotation`, a state interface given to `StateGraph`, `entrypoint`, a factory): their
// schemas come from the TypeScript types of their source files, as the official JS server derives
// them. The expected answers were recorded from the official server on the same graphs
// (test/fixtures/ts-schemas/official-schemas.json says how). zod graphs: graph-modules.test.ts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useRuntime, type RuntimeFixture } from '../support/fixture.js';
import { REPO_ROOT } from '../support/server.js';

const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'ts-schemas');
const CONFIG = join(FIXTURES, 'langgraph.json');

type Schema = Record<string, unknown>;
type Answer = Record<string, Schema | string | null | undefined>;

const official = (
  JSON.parse(readFileSync(join(FIXTURES, 'official-schemas.json'), 'utf8')) as {
    schemas: Record<string, Answer>;
  }
).schemas;

const PARTS = [
  'input_schema',
  'output_schema',
  'state_schema',
  'config_schema',
  'context_schema',
] as const;

/** The official server leaves out a part it cannot derive; Graphdock answers null. */
function withNulls(answer: Answer): Answer {
  return { ...answer, ...Object.fromEntries(PARTS.map((p) => [p, answer[p] ?? null])) };
}

/** A schema with its definitions by name only (how the messages graph's answer was recorded). */
function definitionNames(schema: Schema): Schema {
  const definitions = schema.definitions as Record<string, unknown>;
  return {
    ...schema,
    definitions: Object.fromEntries(Object.keys(definitions).map((k) => [k, '(left out)'])),
  };
}

/** Every graph's answer, asked for at once as Studio does on opening a project. */
async function answers(rt: RuntimeFixture, ids: string[]): Promise<Record<string, Answer>> {
  const all = await Promise.all(ids.map((id) => rt.client.assistants.getSchemas(id)));
  return Object.fromEntries(ids.map((id, i) => [id, all[i] as unknown as Answer]));
}

describe('schemas from TypeScript types', () => {
  const rt = useRuntime({
    config: CONFIG,
    // The whole project is read in one worker; a loaded CI machine needs more than the default.
    env: { GRAPHDOCK_SCHEMAS_FROM_TYPES: 'true', LANGGRAPH_SCHEMA_RESOLVE_TIMEOUT_MS: '120000' },
  });

  // The first request waits for the compiler: 45 s for these graphs at a load of 15 on 2 cores.
  it(
    'answers as the official JS server for each kind of typed graph',
    { timeout: 240_000 },
    async () => {
      const got = await answers(rt, ['annotation', 'interface', 'functional', 'factory']);
      // Annotation with separate input, output and context; the state is the update the graph
      // takes (here its input), nothing is marked required, literal unions become enums.
      expect(got.annotation).toEqual(withNulls(official.annotation!));
      expect(got.annotation?.config_schema).toMatchObject({
        properties: { model: { type: 'string', enum: ['large', 'small'] } },
      });
      // A factory: the type of the graph it resolves to.
      expect(got.factory).toEqual(withNulls(official.factory!));
      // `entrypoint`: its function's parameter is the state; it has no builder, so no other part.
      expect(got.functional).toEqual(withNulls(official.functional!));
      expect(got.functional?.state_schema).toMatchObject({
        properties: { topic: { type: 'string' }, count: { type: 'number' } },
      });
      // The official server sees only `{ type: 'object' }` in an interface given as a generic (the
      // compiled graph's input type is LangGraph's generic one); Graphdock keeps the channels' keys
      // there, and answers its empty config as the official server does.
      expect(official.interface?.state_schema).toEqual({
        type: 'object',
        $schema: 'http://json-schema.org/draft-07/schema#',
      });
      expect(got.interface?.config_schema).toEqual(official.interface?.config_schema);
      for (const part of ['input_schema', 'output_schema', 'state_schema'] as const)
        expect(
          Object.keys((got.interface?.[part] as { properties: object }).properties).sort(),
        ).toEqual(['done', 'owner', 'priority', 'steps', 'title']);
    },
  );

  it(
    'describes message lists with the BaseMessage definitions of @langchain/core, a JavaScript graph by its channels',
    { timeout: 240_000 },
    async () => {
      const got = (await rt.client.assistants.getSchemas('messages')) as unknown as Answer;
      const expected = official.messages!;
      for (const part of ['input_schema', 'output_schema', 'state_schema'] as const) {
        // The definitions' contents match too, up to the order of some union members.
        expect(definitionNames(got[part] as Schema)).toEqual(expected[part]);
        expect(got[part]).toMatchObject({
          properties: {
            messages: {
              type: 'array',
              items: {
                $ref: '#/definitions/BaseMessage<MessageStructure<MessageToolSet>,MessageType>',
              },
            },
          },
        });
      }
      expect(got.config_schema).toEqual(expected.config_schema);

      // A graph in JavaScript has no types: its channels, as before (the official server answers
      // 500 here, its parser reads TypeScript only).
      const js = await rt.client.assistants.getSchemas('javascript');
      expect(js.state_schema).toEqual({
        type: 'object',
        properties: { messages: { type: 'array', items: expect.any(Object) as unknown } },
      });
      expect(js.config_schema).toBeNull();
    },
  );
});

describe('when the types cannot be read in time', () => {
  const rt = useRuntime({
    config: CONFIG,
    env: { GRAPHDOCK_SCHEMAS_FROM_TYPES: 'true', LANGGRAPH_SCHEMA_RESOLVE_TIMEOUT_MS: '1' },
  });

  it('describes the graphs by their channels and keeps serving them', async () => {
    const got = await rt.client.assistants.getSchemas('annotation');
    expect(Object.keys((got.state_schema as { properties: object }).properties).sort()).toEqual([
      'answer',
      'attempts',
      'messages',
      'mode',
      'question',
      'tags',
    ]);
    // Input and output: the keys of the Input and Output annotations the graph declares.
    expect(Object.keys((got.input_schema as { properties: object }).properties)).toEqual([
      'question',
    ]);
    expect(Object.keys((got.output_schema as { properties: object }).properties).sort()).toEqual([
      'answer',
      'attempts',
    ]);
    expect(got.config_schema).toBeNull();
    // Cached: the next answer comes at once, and runs are unaffected.
    expect((await rt.client.assistants.getSchemas('annotation')).state_schema).toEqual(
      got.state_schema,
    );
    const out = await rt.client.runs.wait(null, 'annotation', { input: { question: 'why' } });
    expect(out).toMatchObject({ answer: 're: why', attempts: 1 });
    expect(rt.server.output()).toContain('timed out after');
  });
});
