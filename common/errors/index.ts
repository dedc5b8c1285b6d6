// Typed errors with stable codes. The HTTP layer maps them to status codes in one place.

import { ErrorCodes, type ErrorCode } from './codes.js';

export { ErrorCodes, type ErrorCode };

export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly detail: string | ValidationIssue[];

  /** Headers the answer carries (e.g. `WWW-Authenticate` from a project's auth handler). */
  readonly headers: Record<string, string> | undefined;
  private readonly statusOverride: number | undefined;

  constructor(
    code: ErrorCode,
    detail: string | ValidationIssue[],
    // `status`: a project's auth handler may choose its own 4xx for UNAUTHORIZED/FORBIDDEN.
    options?: { cause?: unknown; status?: number; headers?: Record<string, string> },
  ) {
    super(typeof detail === 'string' ? detail : detail.map((d) => d.msg).join('; '), options);
    this.name = 'AppError';
    this.code = code;
    this.detail = detail;
    this.headers = options?.headers;
    this.statusOverride = options?.status;
  }

  get status(): number {
    return this.statusOverride ?? ErrorCodes[this.code];
  }
}

export const notFound = (detail: string) => new AppError('NOT_FOUND', detail);
export const conflict = (detail: string) => new AppError('CONFLICT', detail);
export const badRequest = (detail: string) => new AppError('BAD_REQUEST', detail);
export const unavailable = (detail: string) => new AppError('UNAVAILABLE', detail);
export const invalid = (loc: (string | number)[], msg: string, type = 'value_error') =>
  new AppError('VALIDATION', [{ loc, msg, type }]);

export { validationIssues, type ValidationEntry } from './validation.js';
export { ErrorBody, errorResponses } from './responses.js';
