// Stopping the HTTP server without losing a request. A client may send on a kept-alive
// connection at any moment, and a request written just as the server closes that connection is
// lost: the client gets a reset and cannot know whether it ran (fetch/undici and the official
// SDKs do not retry it). So once draining, every answer says `connection: close` and its
// connection closes after it; on close the listener stops, but connections still open are
// served until each has closed after an answer, and only one left idle for a while is closed by
// the server. fastify's own close cannot do this: it answers 503 on every connection left open
// and closes idle ones at once.
import { Server as NetServer, type Socket } from 'node:net';
import type { Server } from 'node:http';

/** How often idle connections are looked at while closing. */
const SWEEP_MS = 100;

interface ConnectionState {
  /** Requests in flight (more than one only if the client pipelines). */
  busy: number;
  /** A WebSocket now: its own protocol ends it, never an idle timer. */
  upgraded: boolean;
  idleSince: number;
  /** Bytes read when it became idle: more means a request is arriving. */
  bytesAtIdle: number;
}

export class HttpConnections {
  private readonly open = new Map<Socket, ConnectionState>();
  private draining = false;
  private closing: Promise<void> | undefined;

  constructor(private readonly server: Server) {
    server.on('connection', (socket: Socket) => {
      this.open.set(socket, { busy: 0, upgraded: false, idleSince: Date.now(), bytesAtIdle: 0 });
      socket.once('close', () => this.open.delete(socket));
    });
    // On the raw server, ahead of fastify: it also reaches streamed (hijacked) answers.
    server.prependListener('request', (req, res) => {
      const state = this.open.get(req.socket);
      if (this.draining) res.setHeader('connection', 'close');
      if (!state) return;
      state.busy++;
      res.once('close', () => {
        state.busy--;
        state.idleSince = Date.now();
        state.bytesAtIdle = req.socket.bytesRead;
      });
    });
    server.prependListener('upgrade', (req) => {
      const state = this.open.get(req.socket);
      if (state) state.upgraded = true;
    });
  }

  /** From now on every answer closes its connection. */
  startDraining(): void {
    this.draining = true;
  }

  /** Connections still open. */
  get size(): number {
    return this.open.size;
  }

  /**
   * Stops taking new connections and resolves once every open one has closed: after its answer
   * (each says `connection: close`), or by the server once idle for `idleGraceMs` counted from
   * now at the earliest. WebSockets end on their own (or with fastify's close).
   */
  close(idleGraceMs: number): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.draining = true;
      const closedAt = Date.now();
      // net's close, not http's: http's also destroys every idle connection at once, which
      // loses a request a client is sending on one just then.
      NetServer.prototype.close.call(this.server);
      const sweep = () => {
        const now = Date.now();
        for (const [socket, state] of this.open) {
          if (state.busy > 0 || state.upgraded) continue;
          // Bytes came in since the last answer: a request is on its way, let it be answered.
          if (socket.bytesRead > state.bytesAtIdle) continue;
          if (now - Math.max(state.idleSince, closedAt) >= idleGraceMs) socket.destroy();
        }
        if (this.open.size === 0) resolve();
        else setTimeout(sweep, SWEEP_MS);
      };
      sweep();
    });
    return this.closing;
  }
}
