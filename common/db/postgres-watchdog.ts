// The embedded PostgreSQL must not outlive the process that started it. PostgreSQL does not watch
// its parent, so it runs under a small POSIX shell that does: the shell holds the read end of a
// pipe whose write end only the starting process has, and when that end closes (a clean stop,
// a crash, SIGKILL, an OOM kill, a closed terminal) it asks PostgreSQL for a fast shutdown.
// Without it, a `graphdock dev` killed hard left a postmaster holding its data directory, and
// every later `graphdock dev` on that folder failed on the lock until the user found and killed it.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';

/** `$0` of the watchdog shell: how a later start recognises one in the process table. */
export const WATCHDOG_NAME = 'graphdock-embedded-postgres';

// $1 is the starting process's pid (read by later starts, see `holderOf`); the rest is the
// command. The watcher reads a copy of stdin (an asynchronous list's own stdin is /dev/null), and
// the shell ignores terminal signals so that a Ctrl-C cannot end it before PostgreSQL.
const SCRIPT = [
  'shift',
  '"$@" &',
  'postgres=$!',
  'exec 3<&0',
  '( read -r _ <&3; kill -INT "$postgres" 2>/dev/null ) &',
  'watcher=$!',
  'exec 3<&-',
  "trap '' INT TERM HUP QUIT",
  'wait "$postgres"',
  'status=$?',
  'kill "$watcher" 2>/dev/null',
  'exit "$status"',
].join('\n');

const WITHOUT_SHELL = process.platform === 'win32';

export interface WatchedSpawnOptions {
  uid?: number;
  gid?: number;
}

/**
 * Starts `command` under the watchdog, in a process group of its own (a terminal's Ctrl-C
 * reaches the starting process only, which then stops the server in its own order).
 */
export function spawnWatched(
  command: string,
  args: readonly string[],
  options: WatchedSpawnOptions = {},
): ChildProcess {
  // No POSIX shell on Windows: PostgreSQL runs bare there, as before the watchdog.
  if (WITHOUT_SHELL) return spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], ...options });
  return spawn('/bin/sh', ['-c', SCRIPT, WATCHDOG_NAME, String(process.pid), command, ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
    ...options,
  });
}

/** Ends a watched server: the pipe's end asks for a fast shutdown; the group is killed after `graceMs`. */
export async function stopWatched(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // SIGINT is PostgreSQL's fast shutdown, which the watchdog sends when its pipe closes.
  if (WITHOUT_SHELL) child.kill('SIGINT');
  else child.stdin?.end();
  const timer = setTimeout(() => killGroup(child), graceMs);
  await exited;
  clearTimeout(timer);
}

/** The watchdog, PostgreSQL and its backends share the watchdog's process group. */
export function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: alive, but another user's.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

interface ProcessInfo {
  ppid: number;
  args: string[];
  /** The working directory, where the system tells it (Linux). */
  cwd?: string;
}

/** Parent and command line of a process, from /proc where there is one, else from `ps`. */
function processInfo(pid: number): ProcessInfo | undefined {
  try {
    if (existsSync('/proc/self/stat')) {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // The command name in parentheses may hold spaces and parentheses: read after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
      return { ppid, args, cwd: readlinkSync(`/proc/${pid}/cwd`) };
    }
    const line = execFileSync('ps', ['-o', 'ppid=', '-o', 'args=', '-p', String(pid)], {
      encoding: 'utf8',
    }).trim();
    const [ppid, ...args] = line.split(/\s+/);
    return line ? { ppid: Number(ppid), args } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What holds a data directory's lock, given the pid in its `postmaster.pid`: nothing (`none`: that
 * pid is gone or is no PostgreSQL, the file is stale), a postmaster whose starter still runs it
 * under the watchdog (`owner`), one that nobody keeps any more (`left`: its starter is gone, or it
 * was started without a watchdog), or a live process this one cannot inspect (`unknown`).
 */
export type Holder =
  | { kind: 'none' }
  | { kind: 'unknown' }
  | { kind: 'owner'; pid: number }
  | { kind: 'left'; postmaster: number };

export function holderOf(postmaster: number, dataDir: string): Holder {
  if (!isAlive(postmaster)) return { kind: 'none' };
  const info = processInfo(postmaster);
  if (!info) return { kind: 'unknown' };
  // The pid was taken since by another program, or by the postmaster of another directory.
  if (!/(^|\/)postgres$/.test(info.args[0] ?? '') || !servesDir(info, dataDir))
    return { kind: 'none' };
  const parent = processInfo(info.ppid);
  const at = parent?.args.indexOf(WATCHDOG_NAME) ?? -1;
  const owner = at >= 0 ? Number(parent?.args[at + 1]) : NaN;
  return isAlive(owner) ? { kind: 'owner', pid: owner } : { kind: 'left', postmaster };
}

/** A postmaster works in its data directory; where the system does not say, its `-D` tells. */
function servesDir(info: ProcessInfo, dataDir: string): boolean {
  const own = realpathSync(dataDir);
  if (info.cwd !== undefined) return info.cwd === own;
  const given = info.args[info.args.indexOf('-D') + 1];
  return given !== undefined && (given === dataDir || resolve(given) === own);
}
