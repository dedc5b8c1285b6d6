// A deployment's trace key (common/resources/trace-keys.ts), checked against the Secret the
// operator keeps it in. It acts as the deployment's workspace on the trace routes only.
import { createHash, timingSafeEqual } from 'node:crypto';
import { AppError } from '../../common/errors/index.js';
import {
  parseTraceKey,
  TRACE_KEY_FIELDS,
  traceKeySecretName,
} from '../../common/resources/index.js';
import type { Principal, TenancyService } from '../tenancy/index.js';

export const TRACE_KEY_PERMISSIONS = ['TRACES_WRITE'];

export interface SecretReader {
  readSecret(namespace: string, name: string): Promise<Record<string, string> | undefined>;
}

/** A checked key is trusted this long: a rotated or deleted key stops working within it. */
const TTL_MS = 60_000;
/** Keys remembered at most (checked and refused alike), so unknown keys cannot grow the cache. */
const MAX_ENTRIES = 10_000;

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

export class TraceKeyVerifier {
  private readonly cache = new Map<string, { workspaceId?: string; expires: number }>();

  constructor(
    private readonly secrets: SecretReader,
    private readonly tenancy: Pick<TenancyService, 'workspacePrincipal'>,
    private readonly now = () => Date.now(),
  ) {}

  static isTraceKey(key: string | undefined): key is string {
    return key !== undefined && parseTraceKey(key) !== undefined;
  }

  /** The workspace the key acts for; 401 unless its deployment's Secret holds it. */
  async authenticate(key: string, tenantId: string | undefined): Promise<Principal> {
    const where = parseTraceKey(key)!;
    const id = digest(key).toString('base64url');
    let entry = this.cache.get(id);
    if (!entry || entry.expires <= this.now()) {
      entry = { workspaceId: await this.lookUp(key, where), expires: this.now() + TTL_MS };
      if (this.cache.size >= MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
      this.cache.delete(id);
      this.cache.set(id, entry);
    }
    if (!entry.workspaceId) throw new AppError('UNAUTHORIZED', 'Invalid API key');
    return this.tenancy.workspacePrincipal(
      entry.workspaceId,
      `deployment:${where.deploymentId}`,
      TRACE_KEY_PERMISSIONS,
      tenantId,
    );
  }

  private async lookUp(
    key: string,
    where: { namespace: string; deploymentId: string },
  ): Promise<string | undefined> {
    const data = await this.secrets.readSecret(
      where.namespace,
      traceKeySecretName(where.deploymentId),
    );
    if (!data) return undefined;
    const given = digest(key);
    const matches = [data[TRACE_KEY_FIELDS.key], data[TRACE_KEY_FIELDS.previous]].some(
      (stored) => stored !== undefined && timingSafeEqual(digest(stored), given),
    );
    return matches ? data[TRACE_KEY_FIELDS.workspace] : undefined;
  }
}
