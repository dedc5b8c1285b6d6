// A deployed runtime accepts exactly the keys its control plane accepts for its workspace. Each
// presented key is checked with the control plane and the answer cached briefly, so a revoked
// key stops working within POSITIVE_TTL_MS plus one check. Keys are cached by digest only.
import { createHash } from 'node:crypto';
import type { Logger } from '../../common/logging/index.js';

export interface ControlPlaneAuthSettings {
  /** Base URL of `graphdock api`, e.g. http://graphdock-api.graphdock:8080 */
  url: string;
  workspaceId: string;
  positiveTtlMs?: number;
  negativeTtlMs?: number;
  /** While the control plane cannot answer, a key it accepted this recently still works. */
  staleGraceMs?: number;
  timeoutMs?: number;
  maxEntries?: number;
}

export type Verdict = 'valid' | 'invalid' | 'unavailable';

const VERIFY_PATH = '/internal/v1/auth/verify';
export const POSITIVE_TTL_MS = 10_000;
const NEGATIVE_TTL_MS = 5_000;
const STALE_GRACE_MS = 120_000;
const TIMEOUT_MS = 3_000;
/** After a failed check, the control plane is not asked again for this long (no request pile-up). */
const BACKOFF_MS = 2_000;
const MAX_ENTRIES = 10_000;

interface Entry {
  valid: boolean;
  /** When the control plane last answered for this key. */
  checkedAt: number;
}

export class ControlPlaneKeyVerifier {
  private readonly entries = new Map<string, Entry>();
  private readonly inflight = new Map<string, Promise<Verdict>>();
  private unreachableUntil = 0;
  private readonly endpoint: string;

  constructor(
    private readonly settings: ControlPlaneAuthSettings,
    private readonly logger: Logger,
  ) {
    this.endpoint = new URL(VERIFY_PATH, settings.url.replace(/\/*$/, '/')).toString();
  }

  async verify(key: string): Promise<Verdict> {
    const id = createHash('sha256').update(key, 'utf8').digest('base64');
    const entry = this.entries.get(id);
    const now = Date.now();
    if (entry) {
      const ttl = entry.valid
        ? (this.settings.positiveTtlMs ?? POSITIVE_TTL_MS)
        : (this.settings.negativeTtlMs ?? NEGATIVE_TTL_MS);
      if (now - entry.checkedAt < ttl) return entry.valid ? 'valid' : 'invalid';
    }
    if (now < this.unreachableUntil) return this.fallback(entry, now);
    // One question per key at a time, however many requests carry it.
    let pending = this.inflight.get(id);
    if (!pending) {
      pending = this.ask(id, key).finally(() => this.inflight.delete(id));
      this.inflight.set(id, pending);
    }
    return pending;
  }

  private async ask(id: string, key: string): Promise<Verdict> {
    let status = 0;
    try {
      const response = await fetch(this.endpoint, {
        headers: { 'x-api-key': key, 'x-tenant-id': this.settings.workspaceId },
        signal: AbortSignal.timeout(this.settings.timeoutMs ?? TIMEOUT_MS),
      });
      status = response.status;
      await response.body?.cancel();
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'control plane unreachable for key check');
    }
    if (status === 200 || status === 401 || status === 403) {
      this.remember(id, { valid: status === 200, checkedAt: Date.now() });
      return status === 200 ? 'valid' : 'invalid';
    }
    if (status) this.logger.warn({ status }, 'control plane could not check a key');
    this.unreachableUntil = Date.now() + BACKOFF_MS;
    return this.fallback(this.entries.get(id), Date.now());
  }

  /** Without an answer: a key accepted within the grace keeps working; an unknown one cannot. */
  private fallback(entry: Entry | undefined, now: number): Verdict {
    if (!entry) return 'unavailable';
    if (!entry.valid) return 'invalid';
    return now - entry.checkedAt < (this.settings.staleGraceMs ?? STALE_GRACE_MS)
      ? 'valid'
      : 'unavailable';
  }

  private remember(id: string, entry: Entry): void {
    this.entries.delete(id);
    this.entries.set(id, entry);
    // Insertion order: the first entry is the one answered longest ago.
    if (this.entries.size > (this.settings.maxEntries ?? MAX_ENTRIES))
      this.entries.delete(this.entries.keys().next().value!);
  }
}
