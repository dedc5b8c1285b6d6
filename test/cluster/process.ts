// One long-running child of the cluster (etcd, kube-apiserver, ...): output goes to a log file
// whose tail is quoted when something fails; stop() ends it and waits for the exit.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface ProcessSpec {
  name: string;
  command: string;
  args: string[];
  logDir: string;
  env?: Record<string, string>;
}

export class ClusterProcess {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private stopping = false;
  readonly logPath: string;

  constructor(readonly spec: ProcessSpec) {
    this.logPath = join(spec.logDir, `${spec.name}.log`);
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** True while the process runs; an unexpected exit is reported by describeExit(). */
  get running(): boolean {
    return (
      this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null
    );
  }

  start(): void {
    if (this.running) throw new Error(`${this.spec.name} is already running`);
    this.stopping = false;
    const log = createWriteStream(this.logPath, { flags: 'a' });
    const child = spawn(this.spec.command, this.spec.args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...this.spec.env },
    });
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    this.exited = new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.once('error', (error) => {
        log.write(`spawn error: ${error.message}\n`);
        resolve();
      });
    }).then(() => void log.end());
    this.child = child;
  }

  /** SIGTERM, then SIGKILL after `graceMs` (0: SIGKILL at once); resolves once it is gone. */
  async stop(graceMs = 10_000): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return this.exited;
    this.stopping = true;
    child.kill(graceMs > 0 ? 'SIGTERM' : 'SIGKILL');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }

  /** Synchronous last resort for process 'exit' handlers. */
  killNow(): void {
    if (this.running) this.child?.kill('SIGKILL');
  }

  describeExit(): string | undefined {
    const child = this.child;
    if (!child || this.running || this.stopping) return undefined;
    return `${this.spec.name} exited (code ${child.exitCode}, signal ${child.signalCode})`;
  }

  logTail(chars = 4_000): string {
    try {
      return readFileSync(this.logPath, 'utf8').slice(-chars);
    } catch {
      return '';
    }
  }
}
