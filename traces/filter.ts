// The part of LangSmith's run filter language the trace store serves, compiled to SQL:
// and/or/not of eq, neq, gt, gte, lt, lte, in, has over run fields, plus metadata pairs
// `and(eq(metadata_key, "thread_id"), eq(metadata_value, "..."))`.
import { AppError } from '../common/errors/index.js';
import type { SqlParams } from '../common/db/index.js';

type Node =
  | { call: string; args: Node[] }
  | { value: string | number | boolean }
  | { list: Node[] }
  | { ident: string };

const invalid = (msg: string) =>
  new AppError('VALIDATION', [{ loc: ['body', 'filter'], msg, type: 'value_error' }]);

function tokenize(text: string): string[] {
  const tokens: string[] = [];
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (/\s/.test(ch)) i++;
    else if ('(),[]'.includes(ch)) tokens.push(text[i++]!);
    else if (ch === '"' || ch === "'") {
      let j = i + 1;
      while (j < text.length && text[j] !== ch) j += text[j] === '\\' ? 2 : 1;
      if (j >= text.length) throw invalid('unterminated string in filter');
      tokens.push(text.slice(i, j + 1));
      i = j + 1;
    } else {
      let j = i;
      while (j < text.length && !/[\s(),[\]"']/.test(text[j]!)) j++;
      tokens.push(text.slice(i, j));
      i = j;
    }
  }
  return tokens;
}

function parse(text: string): Node {
  const tokens = tokenize(text);
  let i = 0;
  const next = () => tokens[i++];
  const expr = (): Node => {
    const t = next();
    if (t === undefined) throw invalid('unexpected end of filter');
    if (t === '[') {
      const list: Node[] = [];
      while (tokens[i] !== ']') {
        list.push(expr());
        if (tokens[i] === ',') i++;
        else if (tokens[i] !== ']') throw invalid('expected , or ] in list');
      }
      i++;
      return { list };
    }
    if (t.startsWith('"') || t.startsWith("'"))
      return { value: t.slice(1, -1).replace(/\\(.)/g, '$1') };
    if (tokens[i] === '(') {
      i++;
      const args: Node[] = [];
      while (tokens[i] !== ')') {
        args.push(expr());
        if (tokens[i] === ',') i++;
        else if (tokens[i] !== ')') throw invalid(`expected , or ) in ${t}(...)`);
      }
      i++;
      return { call: t.toLowerCase(), args };
    }
    if (/^-?\d+(\.\d+)?$/.test(t)) return { value: Number(t) };
    if (t === 'true' || t === 'false') return { value: t === 'true' };
    return { ident: t };
  };
  const root = expr();
  if (i !== tokens.length) throw invalid('unexpected text after the filter');
  return root;
}

const COLUMNS: Record<string, { sql: string; cast: string }> = {
  id: { sql: 'r.id', cast: 'uuid' },
  trace_id: { sql: 'r.trace_id', cast: 'uuid' },
  parent_run_id: { sql: 'r.parent_run_id', cast: 'uuid' },
  session_id: { sql: 'r.session_id', cast: 'uuid' },
  reference_example_id: { sql: 'r.reference_example_id', cast: 'uuid' },
  name: { sql: 'r.name', cast: 'text' },
  run_type: { sql: 'r.run_type', cast: 'text' },
  status: { sql: 'r.status', cast: 'text' },
  error: { sql: 'r.error', cast: 'text' },
  thread_id: { sql: 'r.thread_id', cast: 'text' },
  is_root: { sql: 'r.is_root', cast: 'boolean' },
  start_time: { sql: 'r.start_time', cast: 'timestamptz' },
  end_time: { sql: 'r.end_time', cast: 'timestamptz' },
  first_token_time: { sql: 'r.first_token_time', cast: 'timestamptz' },
  total_tokens: { sql: 'r.total_tokens', cast: 'bigint' },
  prompt_tokens: { sql: 'r.prompt_tokens', cast: 'bigint' },
  completion_tokens: { sql: 'r.completion_tokens', cast: 'bigint' },
  total_cost: { sql: 'r.total_cost', cast: 'numeric' },
  prompt_cost: { sql: 'r.prompt_cost', cast: 'numeric' },
  completion_cost: { sql: 'r.completion_cost', cast: 'numeric' },
  latency: { sql: 'extract(epoch FROM r.end_time - r.start_time)', cast: 'numeric' },
};

const OPS: Record<string, string> = { eq: '=', neq: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' };

function scalar(node: Node | undefined): string | number | boolean {
  if (node && 'value' in node) return node.value;
  if (node && 'ident' in node) return node.ident;
  throw invalid('expected a value');
}

function field(node: Node | undefined): string {
  if (node && 'ident' in node) return node.ident;
  throw invalid('expected a field name');
}

/** `metadata_key`/`metadata_value` comparisons of one `and`, paired into metadata lookups. */
function metadataPair(args: Node[], params: SqlParams): { sql: string; rest: Node[] } | undefined {
  const isField = (n: Node, name: string) =>
    'call' in n && (n.call === 'eq' || n.call === 'in') && field(n.args[0]) === name;
  const key = args.find((n) => isField(n, 'metadata_key'));
  const value = args.find((n) => isField(n, 'metadata_value'));
  if (!key || !value || !('call' in key) || !('call' in value)) return undefined;
  const valuesOf = (n: { call: string; args: Node[] }) => {
    const arg = n.args[1];
    return n.call === 'in' && arg && 'list' in arg
      ? arg.list.map((x) => String(scalar(x)))
      : [String(scalar(arg))];
  };
  const keys = valuesOf(key);
  const values = valuesOf(value);
  const v = params.add(values);
  const sql = keys
    .map((k) => `(r.extra->'metadata'->>${params.add(k)}) = ANY(${v}::text[])`)
    .join(' OR ');
  return { sql: `(${sql})`, rest: args.filter((n) => n !== key && n !== value) };
}

function compile(node: Node, params: SqlParams): string {
  if (!('call' in node)) throw invalid('expected a comparison');
  const { call, args } = node;
  if (call === 'and' || call === 'or') {
    let rest = args;
    const parts: string[] = [];
    if (call === 'and') {
      const pair = metadataPair(args, params);
      if (pair) {
        parts.push(pair.sql);
        rest = pair.rest;
      }
    }
    parts.push(...rest.map((a) => compile(a, params)));
    return parts.length ? `(${parts.join(call === 'and' ? ' AND ' : ' OR ')})` : 'true';
  }
  if (call === 'not') return `NOT (${compile(args[0] ?? { value: true }, params)})`;
  const name = field(args[0]);
  if (call === 'has') {
    if (name === 'tags') return `${params.add(String(scalar(args[1])))} = ANY(r.tags)`;
    if (name === 'metadata') {
      const m = scalar(args[1]);
      return `(r.extra->'metadata')::jsonb @> ${params.add(typeof m === 'string' ? m : JSON.stringify(m))}::jsonb`;
    }
    throw invalid(`has() supports tags and metadata, not ${name}`);
  }
  const column = COLUMNS[name];
  if (!column) throw invalid(`unsupported filter field ${name}`);
  if (call === 'in') {
    const list = args[1];
    if (!list || !('list' in list)) throw invalid('in() takes a list');
    return `${column.sql} = ANY(${params.add(list.list.map((x) => scalar(x)))}::${column.cast}[])`;
  }
  const op = OPS[call];
  if (!op) throw invalid(`unsupported filter operator ${call}`);
  return `${column.sql} ${op} ${params.add(scalar(args[1]))}::${column.cast}`;
}

/** The SQL condition of a filter expression, its values added to `params`. */
export function compileFilter(text: string, params: SqlParams): string {
  return compile(parse(text), params);
}
