// GRAPHDOCK_TRACES_PUBLIC_URL: where users reach the trace store, the base of the presigned
// feedback URLs the api hands out (in a cluster the runtime asks on the api's Service, a host no
// user reaches). A proxy forwarding that URL's path reaches the token's route.
import { Client } from 'langsmith';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/server.js';
import { TRACES_BOOTSTRAP_KEY, useTraceApi } from '../support/traces.js';

const PUBLIC = 'https://traces.example.com/api/v1';
const api = useTraceApi({ env: { GRAPHDOCK_TRACES_PUBLIC_URL: `${PUBLIC}/` } });

describe('presigned feedback URLs under the public URL', () => {
  it('name the public host, and the path behind it is the token route', async () => {
    const ls = new Client({ apiUrl: api.endpoint, apiKey: TRACES_BOOTSTRAP_KEY });
    const runId = crypto.randomUUID();
    const token = await ls.createPresignedFeedbackToken(runId, 'thumbs');
    expect(token.url).toBe(`${PUBLIC}/feedback/tokens/${token.id}`);
    // What a proxy for traces.example.com would send on.
    const forwarded = await fetch(`${api.api.url}${new URL(token.url).pathname}?score=1`);
    expect(forwarded.status).toBe(200);
    expect(await forwarded.json()).toMatchObject({ run_id: runId, key: 'thumbs', score: 1 });
  });

  it('stops the api in one line when it is not an http(s) URL', async () => {
    const { code, output } = await runCli(['api', '--port', '0'], {
      DATABASE_URL: api.db.url,
      GRAPHDOCK_TRACES_PUBLIC_URL: 'ftp://traces.example.com/api/v1',
    });
    expect(code).toBe(1);
    expect(output).toMatch(/GRAPHDOCK_TRACES_PUBLIC_URL: expected an http\(s\) URL/);
  });
});
