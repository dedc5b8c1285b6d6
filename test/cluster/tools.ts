// Locates (building once if needed) the Kubernetes binaries the local cluster runs. The build
// itself lives in build-tools.sh so CI, developers and this helper share one cached result.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export const BUILD_SCRIPT = join(import.meta.dirname, 'build-tools.sh');
export const TOOL_NAMES = [
  'etcd',
  'kube-apiserver',
  'kube-controller-manager',
  'kube-scheduler',
  'kubectl',
  'kwok',
  'helm',
] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

/** Runs build-tools.sh (a no-op when cached) and returns the folder holding every binary. */
export async function ensureTools(
  options: { onOutput?: (line: string) => void } = {},
): Promise<string> {
  const fromEnv = process.env.GRAPHDOCK_TOOLS_BIN;
  if (fromEnv) {
    assertComplete(fromEnv);
    return fromEnv;
  }
  const child = spawn('bash', [BUILD_SCRIPT], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderrTail = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    stderrTail = (stderrTail + text).slice(-8_000);
    for (const line of text.split('\n')) if (line.trim()) options.onOutput?.(line);
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', resolve);
  });
  if (code !== 0) throw new Error(`build-tools.sh failed (exit ${code}):\n${stderrTail}`);
  const binDir = stdout.trim().split('\n').pop() ?? '';
  assertComplete(binDir);
  return binDir;
}

function assertComplete(binDir: string): void {
  const missing = [...TOOL_NAMES, 'kwok-stages.yaml'].filter(
    (name) => !existsSync(join(binDir, name)),
  );
  if (missing.length > 0) throw new Error(`missing tools in ${binDir}: ${missing.join(', ')}`);
}
