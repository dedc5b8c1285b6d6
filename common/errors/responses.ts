// The body every error answer carries, as a schema for the OpenAPI document, and the response
// entries a route declares for the errors it raises.
import { z } from 'zod';
import { ErrorCodes, type ErrorCode } from './codes.js';

const ValidationIssue = z.object({
  loc: z.array(z.union([z.string(), z.number()])),
  msg: z.string(),
  type: z.string(),
});

/** `detail` is a message, or for a 422 the list of the values that broke the schema. */
export const ErrorBody = z
  .object({ detail: z.union([z.string(), z.array(ValidationIssue)]) })
  .meta({ id: 'Error' });

/** `errorResponses('NOT_FOUND', 'CONFLICT')` → `{404: ErrorBody, 409: ErrorBody}`. */
export function errorResponses(...codes: ErrorCode[]): Record<number, typeof ErrorBody> {
  return Object.fromEntries(codes.map((code) => [ErrorCodes[code], ErrorBody]));
}
