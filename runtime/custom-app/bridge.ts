// Hands a request to the built-in API (fastify) from inside the custom app's Hono chain, and
// gives its middleware the answer: status and headers as a Response without a body. The body
// never goes through Hono: fastify's writes are held until the middleware is done, then sent as
// they are (streams included), under the status and headers the middleware left. A middleware
// that puts another Response in its place gets that one sent instead, and fastify's is dropped.
import { once } from 'node:events';
import { ServerResponse, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { randomUUID } from 'node:crypto';

/** Marks the Response standing for fastify's answer; a random value nobody else can produce. */
const MARKER = `x-graphdock-builtin-${randomUUID()}`;
type Args = unknown[];
const proto = ServerResponse.prototype as unknown as Record<
  'writeHead' | 'write' | 'end',
  (this: ServerResponse, ...args: Args) => unknown
>;

export type ApiHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** A Fetch API header list as Node's outgoing headers (Set-Cookie kept as separate values). */
export function outgoingHeaders(headers: Headers): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  headers.forEach((value, name) => {
    if (name !== 'set-cookie' && name !== MARKER) out[name] = value;
  });
  const cookies = headers.getSetCookie();
  if (cookies.length) out['set-cookie'] = cookies;
  return out;
}

/** Writes a Response with the prototype's methods (the instance's are the bridge's). */
export async function writeResponse(res: ServerResponse, response: Response): Promise<void> {
  proto.writeHead.call(res, response.status, outgoingHeaders(response.headers));
  if (!response.body) {
    proto.end.call(res);
    return;
  }
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!proto.write.call(res, value) && !res.destroyed)
        await Promise.race([once(res, 'drain'), once(res, 'close')]);
      if (res.destroyed) break;
    }
  } finally {
    if (res.destroyed) void reader.cancel().catch(() => undefined);
  }
  proto.end.call(res);
}

type State = 'head' | 'held' | 'passed' | 'dropped';

export class BuiltinBridge {
  private state: State = 'head';
  private readonly held: Array<['write' | 'end', Args]> = [];
  private readonly answer: Promise<Response>;
  private resolveAnswer!: (r: Response) => void;

  constructor(private readonly res: ServerResponse) {
    this.answer = new Promise((r) => (this.resolveAnswer = r));
    this.patch();
    // Gone before fastify answered: whatever the middleware does next goes nowhere.
    res.once('close', () => this.resolveAnswer(new Response(null, { status: 500 })));
  }

  /** Runs fastify on the request; resolves once fastify has chosen its status and headers. */
  run(api: ApiHandler, req: IncomingMessage): Promise<Response> {
    api(req, this.res);
    return this.answer;
  }

  /** Whether the chain's final Response is still fastify's (headers changed or not). */
  isBuiltin(response: Response): boolean {
    return response.headers.has(MARKER) && response.body === null;
  }

  /** Sends fastify's answer under the final status and headers; its body follows as written. */
  pass(response: Response): void {
    this.state = 'passed';
    this.unpatch();
    proto.writeHead.call(this.res, response.status, outgoingHeaders(response.headers));
    for (const [method, args] of this.held) proto[method].apply(this.res, args);
    this.held.length = 0;
  }

  /** Fastify's answer is replaced: what it writes from now on is dropped. */
  async replace(response: Response): Promise<void> {
    this.state = 'dropped';
    for (const [, args] of this.held) callback(args)?.();
    this.held.length = 0;
    await writeResponse(this.res, response);
  }

  private patch(): void {
    const res = this.res;
    const own = res as unknown as Record<string, unknown>;
    const writeHead = (status: number, ...rest: Args) => {
      if (this.state !== 'head') return res;
      this.state = 'held';
      const headers = new Headers();
      // Node's header values: a string, a number, or a list of strings.
      const add = (name: string, value: unknown) => {
        if (value === undefined) return;
        for (const v of [value as string | number | string[]].flat()) headers.append(name, `${v}`);
      };
      const given = rest.find((r) => typeof r === 'object' && r !== null);
      const merged = { ...res.getHeaders(), ...(Array.isArray(given) ? {} : (given as object)) };
      for (const [name, value] of Object.entries(merged)) add(name, value);
      if (Array.isArray(given))
        for (let i = 0; i + 1 < given.length; i += 2) add(String(given[i]), given[i + 1]);
      headers.set(MARKER, '1');
      this.resolveAnswer(new Response(null, { status, headers }));
      return res;
    };
    const hold =
      (method: 'write' | 'end') =>
      (...args: Args) => {
        if (this.state === 'head') writeHead(res.statusCode);
        if (this.state === 'held') this.held.push([method, args]);
        else callback(args)?.();
        return method === 'write' ? true : res;
      };
    own.writeHead = writeHead;
    own.write = hold('write');
    own.end = hold('end');
    // Headers go out with the held writes, once the middleware is done with them.
    own.flushHeaders = () => undefined;
  }

  private unpatch(): void {
    const res = this.res as unknown as Record<string, unknown>;
    for (const name of ['writeHead', 'write', 'end', 'flushHeaders']) delete res[name];
  }
}

function callback(args: Args): (() => void) | undefined {
  const last = args.at(-1);
  return typeof last === 'function' ? (last as () => void) : undefined;
}
