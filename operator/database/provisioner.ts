// Per-deployment databases: one database and one login role of the same name per
// AgentDeployment, in a PostgreSQL server the operator administers.
import { randomBytes } from 'node:crypto';
import { createPool, type Pool } from '../../common/db/index.js';

export interface DatabaseServerSettings {
  /** Admin connection (CREATEDB, CREATEROLE). */
  adminUrl: string;
  /** host:port agent pods use to reach the server, if not the admin URL's. */
  podHost?: string;
}

/** Names are derived from the deployment id: hex only, so they need no quoting. */
export function databaseName(deploymentId: string): string {
  return `gd_${deploymentId.replace(/[^0-9a-f]/gi, '').toLowerCase()}`;
}

export const newDatabasePassword = () => randomBytes(24).toString('hex');

const ALREADY_EXISTS = new Set(['42P04', '42710']); // duplicate_database, duplicate_object

export class DatabaseProvisioner {
  private readonly pool: Pool;

  constructor(private readonly settings: DatabaseServerSettings) {
    this.pool = createPool({
      url: settings.adminUrl,
      max: 4,
      applicationName: 'graphdock-operator',
    });
  }

  /** Creates (or re-keys) the role and creates the database; safe to repeat. */
  async ensure(deploymentId: string, password: string): Promise<string> {
    const name = databaseName(deploymentId);
    if (!/^[0-9a-f]+$/.test(password)) throw new Error('database password must be hex');
    await this.tolerateExisting(`CREATE ROLE ${name} LOGIN PASSWORD '${password}'`);
    await this.pool.query(`ALTER ROLE ${name} LOGIN PASSWORD '${password}'`);
    // The admin must be a member of the role to make it the owner (PostgreSQL 16+).
    await this.tolerateExisting(`GRANT ${name} TO CURRENT_USER`);
    await this.tolerateExisting(`CREATE DATABASE ${name} OWNER ${name}`);
    await this.pool.query(`REVOKE CONNECT ON DATABASE ${name} FROM PUBLIC`);
    return this.urlFor(name, password);
  }

  async exists(deploymentId: string): Promise<boolean> {
    const { rowCount } = await this.pool.query('SELECT 1 FROM pg_database WHERE datname = $1', [
      databaseName(deploymentId),
    ]);
    return (rowCount ?? 0) > 0;
  }

  async drop(deploymentId: string): Promise<void> {
    const name = databaseName(deploymentId);
    await this.pool.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await this.pool.query(`DROP ROLE IF EXISTS ${name}`);
  }

  urlFor(name: string, password: string): string {
    const url = new URL(this.settings.adminUrl);
    url.username = name;
    url.password = password;
    url.pathname = `/${name}`;
    if (this.settings.podHost) url.host = this.settings.podHost;
    return url.toString();
  }

  close(): Promise<void> {
    return this.pool.end();
  }

  private async tolerateExisting(sql: string): Promise<void> {
    try {
      await this.pool.query(sql);
    } catch (err) {
      const code = (err as { code?: string }).code;
      // Granting a role the admin already has is a warning or 0LP01 depending on version.
      if (code && (ALREADY_EXISTS.has(code) || code === '0LP01')) return;
      throw err;
    }
  }
}
