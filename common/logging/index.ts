import pino, { type Logger } from 'pino';

export type { Logger };

export interface LoggerOptions {
  level?: string;
  /** Structured JSON by default; `pretty` prints one readable line per entry (dev only). */
  pretty?: boolean;
  name?: string;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  return pino({
    name: options.name ?? 'graphdock',
    level: options.level ?? 'info',
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['req.headers["x-api-key"]', 'req.headers.authorization'],
      censor: '[redacted]',
    },
  });
}
