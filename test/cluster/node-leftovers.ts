// What of a cluster's real node is still on the machine: used by the tests that check stop()
// and the watchdog leave nothing behind.
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { HOST_DIRS, run } from './node.js';

export interface NodeTraces {
  workDir: string;
  netns: string;
  cgroup: string;
  /** Host end of the node's veth link. */
  hostIf: string;
}

/** Descriptions of every trace found; empty when the node is completely gone. */
export async function nodeLeftovers(t: NodeTraces): Promise<string[]> {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let cmdline = '';
    try {
      cmdline = readFileSync(join('/proc', pid, 'cmdline'), 'utf8').replaceAll('\0', ' ');
    } catch {
      continue; // exited meanwhile
    }
    // The watchdog shell names the folder too, and lives until its owner ends.
    if (cmdline.includes(t.workDir) && !cmdline.includes('graphdock-cluster-watchdog')) {
      found.push(`process ${pid}: ${cmdline.slice(0, 200)}`);
    }
  }
  const { stdout: namespaces } = await run('ip', ['netns', 'list']);
  if (namespaces.split('\n').some((line) => line.split(' ')[0] === t.netns)) {
    found.push(`network namespace ${t.netns}`);
  }
  if (existsSync(join('/sys/class/net', t.hostIf))) found.push(`link ${t.hostIf}`);
  for (const hierarchy of readdirSync('/sys/fs/cgroup')) {
    const path = join('/sys/fs/cgroup', hierarchy, t.cgroup);
    if (existsSync(path)) found.push(`cgroup ${path}`);
  }
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const mountPoint = line.split(' ')[4];
    if (mountPoint?.startsWith(t.workDir)) found.push(`mount ${mountPoint}`);
  }
  if (existsSync(t.workDir)) found.push(`folder ${t.workDir}`);
  if (existsSync('/var/log/containers')) {
    for (const link of readdirSync('/var/log/containers')) {
      const target = readlinkSync(join('/var/log/containers', link));
      if (target.startsWith(t.workDir)) found.push(`log link ${link}`);
    }
  }
  return found;
}

/** The host's iptables rules without packet counters, to compare before and after. */
export async function hostIptables(): Promise<string> {
  const { stdout } = await run('iptables-save', []);
  return stdout
    .split('\n')
    .filter((line) => !line.startsWith('#'))
    .map((line) => line.replace(/\[\d+:\d+\]/g, ''))
    .join('\n');
}

/**
 * Socket files in containerd's fixed shim folder that no process listens on: what a killed shim
 * leaves behind. (Live ones may belong to any containerd on the machine.)
 */
export function staleShimSockets(): string[] {
  if (!existsSync('/run/containerd/s')) return [];
  const listening = readFileSync('/proc/net/unix', 'utf8');
  return readdirSync('/run/containerd/s').filter(
    (name) => !listening.includes(`/run/containerd/s/${name}`),
  );
}

/** Which of the fixed host folders a node may create exist now. */
export function hostDirs(): string[] {
  return HOST_DIRS.filter((path) => existsSync(path));
}
