// Builds (first run only, then cached outside the clone) the Kubernetes binaries and the real
// node's tools before any cluster test file starts, so the build time is paid once and reported.
import { ensureNodeTools, ensureTools } from './tools.js';

export async function setup(): Promise<void> {
  for (const [what, ensure] of [
    ['cluster tools', ensureTools],
    ['real node tools', ensureNodeTools],
  ] as const) {
    const started = Date.now();
    const binDir = await ensure({ onOutput: (line) => console.log(line) });
    console.log(`${what} ready in ${binDir} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  }
}
