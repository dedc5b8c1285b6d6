// Locates (building once if needed) the Kubernetes binaries the local cluster runs. The build
// itself lives in build-tools.sh so CI, developers and this helper share one cached result.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { runBuildScript } from '../support/build-script.js';

export const BUILD_SCRIPT = join(import.meta.dirname, 'build-tools.sh');
export const NODE_BUILD_SCRIPT = join(import.meta.dirname, 'build-node-tools.sh');
/** What a real node needs besides the control plane (build-node-tools.sh). */
export const NODE_TOOL_NAMES = [
  'kubelet',
  'kube-proxy',
  'oci-image',
  'images/pause.oci.tar',
  'images/busybox.oci.tar',
] as const;
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
const CONTROL_PLANE_FILES = [...TOOL_NAMES, 'kwok-stages.yaml'];

/** Runs build-tools.sh (a no-op when cached) and returns the folder holding every binary. */
export async function ensureTools(
  options: { onOutput?: (line: string) => void } = {},
): Promise<string> {
  const fromEnv = process.env.GRAPHDOCK_TOOLS_BIN;
  if (fromEnv) {
    assertComplete(fromEnv, CONTROL_PLANE_FILES);
    return fromEnv;
  }
  const binDir = await runBuildScript(BUILD_SCRIPT, options.onOutput);
  assertComplete(binDir, CONTROL_PLANE_FILES);
  return binDir;
}

/** Same for the real node's tools (build-node-tools.sh; `GRAPHDOCK_NODE_TOOLS_BIN` skips it). */
export async function ensureNodeTools(
  options: { onOutput?: (line: string) => void } = {},
): Promise<string> {
  const fromEnv = process.env.GRAPHDOCK_NODE_TOOLS_BIN;
  if (fromEnv) {
    assertComplete(fromEnv, NODE_TOOL_NAMES);
    return fromEnv;
  }
  const binDir = await runBuildScript(NODE_BUILD_SCRIPT, options.onOutput);
  assertComplete(binDir, NODE_TOOL_NAMES);
  return binDir;
}

function assertComplete(binDir: string, names: readonly string[]): void {
  const missing = names.filter((name) => !existsSync(join(binDir, name)));
  if (missing.length > 0) throw new Error(`missing tools in ${binDir}: ${missing.join(', ')}`);
}
