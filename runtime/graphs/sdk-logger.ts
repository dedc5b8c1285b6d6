// `getLogger()` of `@langchain/langgraph-sdk/logging` returns the logger the server registers on
// `globalThis`; graph modules may call it when they are imported. The official JS server
// registers its winston logger there, so the methods take winston's arguments: a message and
// metadata objects, or one object with a `message`. Here they write through pino.
import { isJsonObject } from '../../common/json/index.js';
import type { Logger } from '../../common/logging/index.js';

const SDK_LOGGER = Symbol.for('langgraph.api.sdk-logger');

type PinoLevel = 'error' | 'warn' | 'info' | 'debug' | 'trace';

/** Winston's level names (npm and cli sets), as pino levels. */
const LEVELS: Record<string, PinoLevel> = {
  error: 'error',
  warn: 'warn',
  help: 'info',
  data: 'info',
  info: 'info',
  prompt: 'info',
  input: 'info',
  http: 'debug',
  verbose: 'debug',
  debug: 'debug',
  silly: 'trace',
};

/** One winston call's arguments as pino's (fields, message). */
export function toPinoArgs(args: unknown[]): [Record<string, unknown>, string | undefined] {
  const [first, ...rest] = args;
  const fields: Record<string, unknown> = {};
  let message: string | undefined;
  if (first instanceof Error) {
    fields.err = first;
    message = first.message;
  } else if (isJsonObject(first)) {
    const { message: inner, ...others } = first;
    Object.assign(fields, others);
    if (inner !== undefined) message = typeof inner === 'string' ? inner : JSON.stringify(inner);
  } else if (first !== undefined) {
    message = typeof first === 'string' ? first : JSON.stringify(first);
  }
  const extra: unknown[] = [];
  for (const meta of rest) {
    if (meta instanceof Error) fields.err = meta;
    else if (isJsonObject(meta)) Object.assign(fields, meta);
    else extra.push(meta);
  }
  if (extra.length) fields.args = extra;
  return [fields, message];
}

export type SdkLogger = Record<keyof typeof LEVELS, (...args: unknown[]) => SdkLogger>;

export function sdkLogger(logger: Logger): SdkLogger {
  const sdk = {} as SdkLogger;
  for (const [name, level] of Object.entries(LEVELS)) {
    sdk[name] = (...args: unknown[]) => {
      const [fields, message] = toPinoArgs(args);
      logger[level](fields, message);
      return sdk;
    };
  }
  return sdk;
}

/** Makes `getLogger()` work in graph modules; before any of them is imported. */
export function registerSdkLogger(logger: Logger): void {
  (globalThis as Record<symbol, unknown>)[SDK_LOGGER] = sdkLogger(logger);
}
