// Schema validation failures (fastify's zod validation entries) as `{loc, msg, type}` issues, the
// shape both HTTP servers answer 422 with. `loc` starts with where the value was: body, path,
// query or header.

/** One entry of fastify's `error.validation`. */
export interface ValidationEntry {
  instancePath: string;
  keyword: string;
  message?: string;
}

const LOCATION: Record<string, string> = {
  body: 'body',
  params: 'path',
  querystring: 'query',
  headers: 'header',
};

const plain = (entry: ValidationEntry) => ({
  msg: entry.message ?? 'Invalid value',
  type: entry.keyword,
});

export function validationIssues(
  error: { validationContext?: string | undefined; validation: ValidationEntry[] },
  describe: (entry: ValidationEntry) => { msg: string; type: string } = plain,
): { loc: (string | number)[]; msg: string; type: string }[] {
  const where = LOCATION[error.validationContext ?? 'body'] ?? 'body';
  // One issue per value. zod runs a type's built-in checks (an integer's safe range) before the
  // bounds a schema declares, so `limit: 1e30` breaks both; the last, declared bound is the one
  // that tells the caller what to send.
  const byPath = new Map<string, ValidationEntry>();
  for (const entry of error.validation) byPath.set(entry.instancePath, entry);
  return [...byPath.values()].map((entry) => ({
    loc: [
      where,
      ...entry.instancePath
        .split('/')
        .filter(Boolean)
        .map((part) => (/^\d+$/.test(part) ? Number(part) : part)),
    ],
    ...describe(entry),
  }));
}
