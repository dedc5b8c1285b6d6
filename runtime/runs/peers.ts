// Whether another process listens for this database's wake-ups. The NOTIFYs of committed changes
// matter only to other processes (this one wakes its own listeners in-process), and each costs
// PostgreSQL a statement, a queue entry and a wake-up of every listening backend; a replica that
// runs alone skips them.
//
// Every listening connection names itself LISTEN_APPLICATION, so pg_stat_activity counts them. A
// process that starts listening counts the others, then says hello on PRESENCE_CHANNEL and waits
// briefly for each of them to answer. A process that hears a hello counts a peer before it
// answers, so by the time the newcomer serves, nobody skips a NOTIFY meant for it. Peers that go
// away are noticed by a recount every few seconds; until then NOTIFYs are sent for nobody.

/** The application_name of every connection that LISTENs for wake-ups. */
export const LISTEN_APPLICATION = 'graphdock-listen';
export const PRESENCE_CHANNEL = 'graphdock_presence';

const COUNT_OTHERS = `SELECT count(*)::int AS n FROM pg_stat_activity
  WHERE datname = current_database() AND application_name = '${LISTEN_APPLICATION}'
    AND pid <> pg_backend_pid()`;

const HELLO = 'hello';
const ANSWER = 'answer:';

/** The listening connection, as far as presence needs it. */
export interface PresenceClient {
  query(sql: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

export class PeerPresence {
  /** Assume someone listens until a count says otherwise. */
  private othersListen = true;
  /** Bumped by every presence message heard, so a count that overlapped one is not believed. */
  private heard = 0;
  private awaited = 0;
  private allAnswered: (() => void) | undefined;

  constructor(private readonly origin: string) {}

  /** Whether no other process listens, so NOTIFYs for them can be skipped. */
  get alone(): boolean {
    return !this.othersListen;
  }

  /** Counts the other listening connections and believes the count unless a message overlapped. */
  async recount(client: PresenceClient): Promise<number> {
    const heardBefore = this.heard;
    const { rows } = await client.query(COUNT_OTHERS);
    const others = (rows[0] as { n: number }).n;
    if (heardBefore === this.heard) this.othersListen = others > 0;
    return others;
  }

  /** Once LISTENing: counts the others, says hello, and waits up to `ms` for their answers. */
  async announce(client: PresenceClient, ms: number): Promise<void> {
    const others = await this.recount(client);
    const hello = () =>
      client.query('SELECT pg_notify($1, $2)', [PRESENCE_CHANNEL, `${this.origin}|${HELLO}`]);
    if (others === 0) {
      await hello();
      return;
    }
    // Waiting before the hello goes out, so that no answer can come first.
    const answered = new Promise<void>((resolve) => {
      this.awaited = others;
      this.allAnswered = resolve;
    });
    await hello();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([answered, new Promise((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
    this.allAnswered = undefined;
  }

  /**
   * A presence message from another process (its origin already checked). Returns the payload to
   * answer with, if it asks for one.
   */
  onMessage(sender: string, message: string): string | undefined {
    this.heard++;
    this.othersListen = true;
    if (message === HELLO) return `${this.origin}|${ANSWER}${sender}`;
    if (message === ANSWER + this.origin && --this.awaited <= 0) this.allAnswered?.();
    return undefined;
  }
}
