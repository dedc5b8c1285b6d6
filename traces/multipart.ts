// The SDKs' multipart ingest body: parts named `post.<id>`, `patch.<id>` (the run without its
// big fields), `post.<id>.<field>` / `patch.<id>.<field>` (inputs, outputs, events, extra,
// error, serialized), `feedback.<id>` (a feedback) and `attachment.<id>.<name>` (not kept).
import { AppError } from '../common/errors/index.js';
import { clipJsonDepth } from '../common/json/index.js';

export interface MultipartRuns {
  post: Record<string, unknown>[];
  patch: Record<string, unknown>[];
  /** `feedback.<id>` parts, each a feedback body (see `FeedbackCreate`), its id from the name. */
  feedback: Record<string, unknown>[];
  /** Parts this store does not keep (attachments). */
  ignored: number;
  /** Arrays and objects cut for nesting too deep (see `clipJsonDepth`). */
  clipped: number;
}

const bad = (msg: string) => new AppError('BAD_REQUEST', msg);

export function boundaryOf(contentType: string | undefined): string {
  const match = /boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '');
  const boundary = match?.[1] ?? match?.[2];
  if (!boundary) throw bad('multipart body without a boundary');
  return boundary;
}

export function parseMultipartRuns(body: Buffer, boundary: string): MultipartRuns {
  const delimiter = Buffer.from(`--${boundary}`);
  const runs = {
    post: new Map<string, Record<string, unknown>>(),
    patch: new Map<string, Record<string, unknown>>(),
  };
  const feedback: Record<string, unknown>[] = [];
  let ignored = 0;
  let clipped = 0;
  let pos = body.indexOf(delimiter);
  if (pos < 0) throw bad('multipart body without its boundary');
  for (;;) {
    pos += delimiter.length;
    // `--` after a delimiter closes the body.
    if (body[pos] === 0x2d && body[pos + 1] === 0x2d) break;
    const headersEnd = body.indexOf('\r\n\r\n', pos);
    if (headersEnd < 0) throw bad('multipart part without headers');
    const headers = body.toString('latin1', pos, headersEnd);
    const next = body.indexOf(delimiter, headersEnd + 4);
    if (next < 0) throw bad('multipart body not closed');
    // The part's data ends with the CRLF that precedes the next delimiter.
    const data = body.subarray(headersEnd + 4, next - 2);
    pos = next;
    const name = /name="([^"]*)"/i.exec(headers)?.[1];
    if (!name) throw bad('multipart part without a name');
    const [kind, id, field, ...more] = name.split('.');
    if (kind === 'attachment') {
      ignored++;
      continue;
    }
    if (kind !== 'post' && kind !== 'patch' && kind !== 'feedback')
      throw bad(`unknown multipart part ${name}`);
    if (!id || more.length || (kind === 'feedback' && field))
      throw bad(`malformed multipart part name ${name}`);
    const { text, clipped: cut } = clipJsonDepth(data.toString('utf8'));
    clipped += cut;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw bad(`multipart part ${name} is not JSON`);
    }
    if (kind === 'feedback') {
      if (!value || typeof value !== 'object' || Array.isArray(value))
        throw bad(`multipart part ${name} is not an object`);
      feedback.push({ ...value, id });
      continue;
    }
    const run = runs[kind].get(id) ?? { id };
    if (field) run[field] = value;
    else if (value && typeof value === 'object') Object.assign(run, value, { id }, pick(run));
    else throw bad(`multipart part ${name} is not an object`);
    runs[kind].set(id, run);
  }
  return {
    post: [...runs.post.values()],
    patch: [...runs.patch.values()],
    feedback,
    ignored,
    clipped,
  };
}

/** Big fields that arrived in their own parts before the run's main part stay as they were. */
function pick(run: Record<string, unknown>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const f of ['inputs', 'outputs', 'events', 'extra', 'error', 'serialized'])
    if (run[f] !== undefined) kept[f] = run[f];
  return kept;
}
