// Locates (building once if needed) the S3 test server's binaries. The build lives in
// build-s3-server.sh so CI, developers and benchmarks share one cached result. Free of vitest
// imports: the global setup uses it too.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { runBuildScript } from './build-script.js';

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
  const binDir = fromEnv ?? (await runBuildScript(S3_BUILD_SCRIPT, options.onOutput));
  const missing = S3_BINARIES.filter((name) => !existsSync(join(binDir, name)));
  if (missing.length > 0) throw new Error(`missing in ${binDir}: ${missing.join(', ')}`);
  return binDir;
}
