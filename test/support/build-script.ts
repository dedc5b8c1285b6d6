// Runs one of the cached tool-build scripts (Kubernetes tools, the real node, the S3 server) and
// resolves to the bin folder it prints last; its stderr is relayed line by line and its tail kept
// for the error. Free of vitest imports: global setups use it.
import { spawn } from 'node:child_process';

export async function runBuildScript(
  script: string,
  onOutput?: (line: string) => void,
): Promise<string> {
  const child = spawn('bash', [script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderrTail = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    stderrTail = (stderrTail + text).slice(-8_000);
    for (const line of text.split('\n')) if (line.trim()) onOutput?.(line);
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', resolve);
  });
  const name = script.split('/').pop();
  if (code !== 0) throw new Error(`${name} failed (exit ${code}):\n${stderrTail}`);
  return stdout.trim().split('\n').pop() ?? '';
}
