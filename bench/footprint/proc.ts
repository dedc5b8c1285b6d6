// /proc readings of a process tree, shared by the footprint benches (Linux only).
import { readFileSync, readdirSync } from 'node:fs';

const TICK_MS = 1000 / 100; // USER_HZ is 100 on Linux.

function statOf(pid: number): { ppid: number; cpuTicks: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields from state (3): ppid is 4, utime 14, stime 15, cutime 16, cstime 17.
    const n = (i: number) => Number(f[i - 3]);
    return { ppid: n(4), cpuTicks: n(14) + n(15) + n(16) + n(17) };
  } catch {
    return undefined;
  }
}

/** `pid` and all its descendants. */
export function tree(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const s = statOf(Number(d));
    if (!s) continue;
    const list = parents.get(s.ppid) ?? [];
    list.push(Number(d));
    parents.set(s.ppid, list);
  }
  const out = [pid];
  for (let i = 0; i < out.length; i++) out.push(...(parents.get(out[i]!) ?? []));
  return out;
}

/** CPU milliseconds used so far by `pid`'s tree (ended children included through cutime). */
export function cpuMs(pid: number): number {
  return tree(pid).reduce((sum, p) => sum + (statOf(p)?.cpuTicks ?? 0), 0) * TICK_MS;
}

/** Resident memory of `pid`'s tree, MiB (tsx's esbuild service, a Python server's workers). */
export function rssMiB(pid: number): number {
  let kb = 0;
  for (const p of tree(pid)) {
    try {
      kb += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      // ended meanwhile
    }
  }
  return kb / 1024;
}
