// The LangGraph CLI's own control-plane client (Python `langgraph_cli.host_backend`, from PyPI)
// against a real `graphdock api` on a local cluster.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { BOOTSTRAP_KEY, useControlPlane } from '../support/control-plane.js';
import { ensurePythonVenv } from '../support/python.js';
import { REPO_ROOT } from '../support/server.js';

const cp = useControlPlane();
let python: string;
let listenerId: string;

beforeAll(async () => {
  python = await ensurePythonVenv();
  const res = await cp.http('/v2/listeners', {
    method: 'POST',
    json: { compute_type: 'k8s', compute_id: 'py', compute_config: { k8s_namespaces: ['agents'] } },
  });
  listenerId = ((await res.json()) as { id: string }).id;
}, 15 * 60_000);

it('passes the pytest suite with the official LangGraph CLI control-plane client', async () => {
  const dir = join(REPO_ROOT, 'test', 'python-control-plane');
  const child = spawn(python, ['-m', 'pytest', '-q', dir], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      CONTROL_PLANE_URL: cp.url,
      CONTROL_PLANE_API_KEY: BOOTSTRAP_KEY,
      CONTROL_PLANE_TENANT_ID: cp.workspaceId,
      CONTROL_PLANE_LISTENER_ID: listenerId,
      PYTHONDONTWRITEBYTECODE: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  expect(code, `${output}\n${cp.api.output().slice(-3000)}`).toBe(0);
  expect(output).toMatch(/2 passed/);
});
