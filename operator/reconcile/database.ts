// The database step of a reconcile: a user-supplied POSTGRES_URI_CUSTOM, or a database and role
// provisioned in the configured server with a password kept in a Secret the deployment owns.
import type { DatabaseProvisioner } from '../database/index.js';
import { newDatabasePassword } from '../database/index.js';
import type { KubeWriter } from '../kube/index.js';
import { ownedSecret } from './children.js';
import { CUSTOM_DATABASE_SECRET, databaseSecretName } from './names.js';
import type { AgentDeployment } from './types.js';

export type DatabaseResult =
  | { ready: true; url: string; custom: boolean; created: boolean }
  | { ready: false; message: string };

export class DatabaseStep {
  /** Deployments (by uid) whose database is known to exist, with its URL. */
  private readonly known = new Map<string, string>();

  constructor(
    private readonly writer: KubeWriter,
    private readonly provisioner: DatabaseProvisioner | undefined,
  ) {}

  async ensure(
    deployment: AgentDeployment,
    secrets: Record<string, string>,
  ): Promise<DatabaseResult> {
    const custom = secrets[CUSTOM_DATABASE_SECRET];
    if (custom) return { ready: true, url: custom, custom: true, created: false };
    const uid = deployment.metadata.uid;
    const cached = this.known.get(uid);
    if (cached) return { ready: true, url: cached, custom: false, created: false };
    if (!this.provisioner)
      return {
        ready: false,
        message: `No database server is configured (GRAPHDOCK_OPERATOR_DATABASE_URL) and the revision has no ${CUSTOM_DATABASE_SECRET} secret`,
      };
    const { name, namespace } = deployment.metadata;
    const secretName = databaseSecretName(name);
    let password = (await this.writer.readSecret(namespace ?? '', secretName))?.password;
    if (!password) {
      password = newDatabasePassword();
      await this.writer.apply(ownedSecret(deployment, secretName, { password }) as never);
    }
    const existed = await this.provisioner.exists(name);
    const url = await this.provisioner.ensure(name, password);
    this.known.set(uid, url);
    return { ready: true, url, custom: false, created: !existed };
  }

  /** Drops the provisioned database unless retained or user-supplied. */
  async release(deployment: AgentDeployment, retain: boolean): Promise<boolean> {
    this.known.delete(deployment.metadata.uid);
    if (retain || !this.provisioner) return false;
    await this.provisioner.drop(deployment.metadata.name);
    return true;
  }
}
