// JSON Schemas of a graph from the TypeScript types of its source file, as the official JS server
// derives them for graphs that carry no schema at run time (`Annotation`, `MessagesAnnotation`,
// `entrypoint`, channels typed by a generic). Runs in a worker thread (see typed-schemas.ts): the
// compiler needs seconds and hundreds of MB, and both are gone when the worker exits.
import { existsSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { isMainThread, parentPort } from 'node:worker_threads';
import ts from 'typescript';
import tjs from 'typescript-json-schema';

export type JsonSchema = Record<string, unknown>;

export interface TypedSchemas {
  state?: JsonSchema | undefined;
  input?: JsonSchema | undefined;
  output?: JsonSchema | undefined;
  config?: JsonSchema | undefined;
}

export interface TypedSchemaRequest {
  file: string;
  exportName: string;
}

export type TypedSchemaReply = { ok: true; schemas: TypedSchemas[] } | { ok: false; error: string };

const PARTS = ['state', 'input', 'output', 'config'] as const;

/** The name of a type the generator reads; unusual enough not to meet a user's. */
function symbolOf(index: number, part: (typeof PARTS)[number]): string {
  return `__graphdock_schema_${index}_${part}`;
}

/** The module specifier that reaches `file` from its own folder, as the compiler resolves it. */
function specifierOf(file: string, options: ts.CompilerOptions): string {
  const ext = extname(file);
  if (options.allowImportingTsExtensions) return `./${basename(file)}`;
  const js = { '.ts': '.js', '.tsx': '.js', '.mts': '.mjs', '.cts': '.cjs' }[ext] ?? ext;
  return `./${basename(file, ext)}${js}`;
}

/**
 * A module beside the graph's file that names the types to describe. The rules are the official
 * server's: the state is the update the compiled graph takes (`~InputType`); input, output and
 * config come from the builder's definitions (update, state and update types); a type that is
 * `any` describes nothing; fields holding messages are `BaseMessage` (or a list of them), and
 * nesting is followed three levels deep.
 */
function probeModule(index: number, specifier: string, exportName: string): string {
  return `
import type * as UserModule from ${JSON.stringify(specifier)};
import type { BaseMessage } from '@langchain/core/messages';
import type { StateDefinition, StateType, UpdateType } from '@langchain/langgraph';

type Exported = (typeof UserModule)[${JSON.stringify(exportName)}];
type Built<T> = T extends (...args: any[]) => infer R ? Awaited<R> : Awaited<T>;
type CompiledOf<T> = T extends { compile(...args: any[]): infer C } ? C : T;
type Graph = CompiledOf<Built<Exported>>;

type IsAny<T> = 0 extends 1 & T ? true : false;
type NotAny<T> = IsAny<T> extends true ? never : T;
type Same<A, B> = (<X>() => X extends A ? 1 : 2) extends <X>() => X extends B ? 1 : 2 ? true : false;
type MessageOf<T> = T extends BaseMessage ? BaseMessage : never;
type MessagesOf<T> = T extends readonly (infer E)[]
  ? Same<MessageOf<E>, BaseMessage> extends true ? BaseMessage[] : never
  : never;
type Plain<T, Depth extends 0[] = []> = Depth['length'] extends 3
  ? any
  : T extends unknown ? { [K in keyof T]: Field<T[K], Depth> } : never;
type Field<V, Depth extends 0[]> = IsAny<V> extends true
  ? V
  : Same<MessagesOf<V>, BaseMessage[]> extends true
    ? BaseMessage[]
    : Same<MessageOf<V>, BaseMessage> extends true
      ? BaseMessage
      : Plain<V, [0, ...Depth]>;

type Takes<G> = G extends { '~InputType': infer I } ? I : never;
type FromBuilder<G> = G extends {
  builder: {
    _inputDefinition: infer I extends StateDefinition;
    _outputDefinition: infer O extends StateDefinition;
    _configSchema?: infer C extends StateDefinition | undefined;
  };
}
  ? { input: UpdateType<I>; output: StateType<O>; config: UpdateType<Exclude<C, undefined>> }
  : never;

export type ${symbolOf(index, 'state')} = Plain<Takes<Graph>>;
export type ${symbolOf(index, 'input')} = Plain<NotAny<FromBuilder<Graph>['input']>>;
export type ${symbolOf(index, 'output')} = Plain<NotAny<FromBuilder<Graph>['output']>>;
export type ${symbolOf(index, 'config')} = Plain<NotAny<FromBuilder<Graph>['config']>>;
`;
}

/** The project's compiler options (its nearest tsconfig.json), checked strictly, never emitting. */
function compilerOptions(dir: string): ts.CompilerOptions {
  const fixed: ts.CompilerOptions = { noEmit: true, strict: true, skipLibCheck: true };
  const configFile = ts.findConfigFile(dir, (f) => ts.sys.fileExists(f), 'tsconfig.json');
  if (!configFile) {
    // No project settings: resolve packages as a bundler does (package `exports` included).
    return {
      ...fixed,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.Preserve,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
    };
  }
  const read = ts.readConfigFile(configFile, (f) => ts.sys.readFile(f));
  const parsed = ts.parseJsonConfigFileContent(read.config ?? {}, ts.sys, dirname(configFile));
  return { ...parsed.options, ...fixed };
}

/** A qualifier the generator puts before names of types from other modules. */
const IMPORT_QUALIFIER = /import\("[^"]*"(?:,\s*\{[^)]*)?\)\./g;

/**
 * Definitions of types from other modules (e.g. `@langchain/core`'s `BaseMessage`) are keyed with
 * the module's path (`import("/.../messages/base").BaseMessage<...>`), and referenced URI-encoded;
 * the official server keys and references them by the plain name.
 */
function plainDefinitionNames(schema: JsonSchema): JsonSchema {
  const definitions = schema.definitions as Record<string, unknown> | undefined;
  if (!definitions) return schema;
  const refs = new Map<string, string>();
  const renamed: Record<string, unknown> = {};
  for (const [key, definition] of Object.entries(definitions)) {
    const plain = key.replace(IMPORT_QUALIFIER, '');
    const name = plain in renamed ? key : plain;
    renamed[name] = definition;
    for (const ref of [key, encodeURIComponent(key)])
      refs.set(`#/definitions/${ref}`, `#/definitions/${name}`);
  }
  const text = JSON.stringify({ ...schema, definitions: renamed }, (_, value: unknown) =>
    typeof value === 'string' ? (refs.get(value) ?? value) : value,
  );
  return JSON.parse(text) as JsonSchema;
}

/** The folder every file is in (the project's root, for its tsconfig.json). */
function commonDir(files: string[]): string {
  let common = dirname(files[0]!);
  for (const file of files.slice(1))
    while (!`${dirname(file)}/`.startsWith(`${common}/`) && dirname(common) !== common)
      common = dirname(common);
  return common;
}

/**
 * The schemas of each graph, in the order asked. The graphs share one program: the compiler's
 * cost is mostly LangGraph's own types, read once however many graphs there are.
 */
export function extractTypedSchemas(requests: TypedSchemaRequest[]): TypedSchemas[] {
  if (!requests.length) return [];
  for (const { file } of requests) if (!existsSync(file)) throw new Error(`${file} does not exist`);
  const options = compilerOptions(commonDir(requests.map((r) => r.file)));
  // Probes exist only in memory, each beside its graph: the project's folders are never written.
  const probes = new Map<string, string>();
  requests.forEach(({ file, exportName }, index) => {
    const name = `__graphdock_schemas_${index}_${basename(file).replace(/\W/g, '_')}.ts`;
    probes.set(
      join(dirname(file), name),
      probeModule(index, specifierOf(file, options), exportName),
    );
  });

  const host = ts.createCompilerHost(options, true);
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const readFile = host.readFile.bind(host);
  host.fileExists = (f) => probes.has(f) || fileExists(f);
  host.readFile = (f) => probes.get(f) ?? readFile(f);
  host.getSourceFile = (f, language, ...rest) => {
    const probe = probes.get(f);
    return probe !== undefined
      ? ts.createSourceFile(f, probe, language, true)
      : getSourceFile(f, language, ...rest);
  };

  const rootNames = [...probes.keys()];
  const program = ts.createProgram({ rootNames, options, host });
  // Type errors in the user's project do not stop it (the official server only logs them).
  const generator = tjs.buildGenerator(program, { ignoreErrors: true }, rootNames);
  if (!generator) throw new Error('the TypeScript program could not be built');
  const schemaOf = (symbol: string): JsonSchema | undefined => {
    try {
      return plainDefinitionNames(generator.getSchemaForSymbol(symbol) as JsonSchema);
    } catch {
      // `never` (no such part, e.g. an entrypoint has no builder) and types JSON Schema cannot
      // express describe nothing.
      return undefined;
    }
  };
  return requests.map((_, index) =>
    Object.fromEntries(PARTS.map((part) => [part, schemaOf(symbolOf(index, part))])),
  );
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  port.once('message', (requests: TypedSchemaRequest[]) => {
    let reply: TypedSchemaReply;
    try {
      reply = { ok: true, schemas: extractTypedSchemas(requests) };
    } catch (err) {
      reply = { ok: false, error: (err as Error).message };
    }
    port.postMessage(reply);
  });
}
