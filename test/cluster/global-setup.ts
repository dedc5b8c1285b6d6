// Builds (first run only, then cached outside the clone) the Kubernetes binaries before any
// cluster test file starts, so the build time is paid once and reported.
import { ensureTools } from './tools.js';

export async function setup(): Promise<void> {
  const started = Date.now();
  const binDir = await ensureTools({ onOutput: (line) => console.log(line) });
  console.log(`cluster tools ready in ${binDir} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}
