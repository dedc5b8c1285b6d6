// A port already in use is the start-up failure users cause most, and an address the machine does
// not have the next: every serving command says so in one line, with the way out, instead of a
// stack trace.
import { createServer } from 'node:net';

/** The server cannot listen where it was asked to. */
export class ListenError extends Error {
  override name = 'ListenError';
}

export class PortInUseError extends ListenError {
  override name = 'PortInUseError';

  constructor(port: number, host: string) {
    super(
      `port ${port} on ${host} is already in use: stop what listens there, or choose another port with --port <n>`,
    );
  }
}

/** Why a listen failed, in the user's terms, for the failures a flag or setting causes. */
const REASONS: Record<string, (host: string) => string> = {
  ENOTFOUND: (host) => `"${host}" is neither an IP address nor a name that resolves`,
  EAI_AGAIN: (host) => `"${host}" is neither an IP address nor a name that resolves`,
  EADDRNOTAVAIL: (host) => `${host} is not an address of this machine`,
  EACCES: () => 'permission denied (ports below 1024 need privileges)',
};

/** A listen's error as a ListenError when the address or port is to blame, else as it came. */
export function listenFailure(err: unknown, port: number, host: string): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'EADDRINUSE') return new PortInUseError(port, host);
  const why = code ? REASONS[code]?.(host) : undefined;
  return why
    ? new ListenError(
        `cannot listen on ${host} port ${port}: ${why}; choose another with --host or --port`,
      )
    : err;
}

/**
 * Throws a ListenError when the server could not listen on `port` of `host`: checked before
 * databases and graphs are set up, so a taken port or a wrong address fails at once and touches
 * nothing. Any other failure to bind is left to the real listen, which reports it. The real
 * listen can still lose a race for the port; its callers pass its error through listenFailure.
 */
export async function ensurePortFree(port: number, host: string): Promise<void> {
  const failure = await new Promise<unknown>((resolve) => {
    const probe = createServer();
    probe.once('error', (err) => resolve(listenFailure(err, port, host)));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(undefined)));
  });
  if (failure instanceof ListenError) throw failure;
}
