// The signal a run's graph executes under: the worker's cancel signal or the run's timeout,
// whichever comes first. Built by hand rather than with AbortSignal.timeout and
// AbortSignal.any: Node keeps a composite signal that has abort listeners (LangGraph adds
// some) reachable until it aborts, and a timeout's timer until it fires, so every finished run
// stayed in memory for the whole timeout (an hour by default). `dispose` lets both go.

export class RunSignal {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private expired = false;
  private readonly onCancel = () => this.controller.abort(this.cancel.reason);

  constructor(
    private readonly cancel: AbortSignal,
    timeoutMs: number,
  ) {
    this.timer = setTimeout(() => {
      this.expired = true;
      this.controller.abort(new DOMException('The run exceeded its timeout', 'TimeoutError'));
    }, timeoutMs);
    this.timer.unref();
    if (cancel.aborted) this.onCancel();
    else cancel.addEventListener('abort', this.onCancel, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Stops the run from within (its lease was lost, say), with `reason`. */
  abort(reason: unknown): void {
    this.controller.abort(reason);
  }

  /** Whether the run's time ran out (rather than being cancelled). */
  get timedOut(): boolean {
    return this.expired;
  }

  /** The run is over: stops its timer and stops listening to its cancel signal. */
  dispose(): void {
    clearTimeout(this.timer);
    this.cancel.removeEventListener('abort', this.onCancel);
  }
}
