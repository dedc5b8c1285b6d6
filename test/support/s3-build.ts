// Locates (building once if needed) the S3 test server's binaries. The build lives in
// build-s3-server.sh so CI, developers and benchmarks share one cached result. Free of vitest
// imports: the global setup uses it too.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export const S3_BUILD_SCRIPT = join(import.meta.dirname, 'build-s3-server.sh');
export const S3_BINARIES = ['minio', 's3-admin'] as const;

/**
 * Builds (first call on a machine) or finds the binaries and resolves to their folder;
 * `GRAPHDOCK_S3_BIN` names a folder that already holds them.
 */
export async function ensureS3Server(
  options: { onOutput?: (line: string) => void } = {},
): Promise<string> {
  const fromEnv = process.env.GRAPHDOCK_S3_BIN;
  const binDir = fromEnv ?? (await runBuild(options.onOutput));
  const missing = S3_BINARIES.filter((name) => !existsSync(join(binDir, name)));
  if (missing.length > 0) throw new Error(`missing in ${binDir}: ${missing.join(', ')}`);
  return binDir;
}

async function runBuild(onOutput?: (line: string) => void): Promise<string> {
  const child = spawn('bash', [S3_BUILD_SCRIPT], { stdio: ['ignore', 'pipe', 'pipe'] });
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
  if (code !== 0) throw new Error(`build-s3-server.sh failed (exit ${code}):\n${stderrTail}`);
  return stdout.trim().split('\n').pop() ?? '';
}
