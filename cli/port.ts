// A port already in use is the start-up failure users cause most: every serving command says so
// in one line, with the way out, instead of a stack trace.
import { createServer } from 'node:net';

export class PortInUseError extends Error {
  override name = 'PortInUseError';

  constructor(port: number, host: string) {
    super(
      `port ${port} on ${host} is already in use: stop what listens there, or choose another port with --port <n>`,
    );
  }
}

export function isAddressInUse(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === 'EADDRINUSE';
}

/**
 * Throws PortInUseError when something already listens on `port`: checked before databases and
 * graphs are set up, so a taken port fails at once and touches nothing. Any other failure to
 * bind is left to the real listen, which reports it. The real listen can still lose a race for
 * the port; its callers turn that EADDRINUSE into the same error.
 */
export async function ensurePortFree(port: number, host: string): Promise<void> {
  if (port === 0) return;
  const inUse = await new Promise<boolean>((resolve) => {
    const probe = createServer();
    probe.once('error', (err) => resolve(isAddressInUse(err)));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve(false)));
  });
  if (inUse) throw new PortInUseError(port, host);
}
