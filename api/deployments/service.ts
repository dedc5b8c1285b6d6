// Deployments and revisions, stored as AgentDeployment and AgentRevision resources in the
// listener's namespace. Status is whatever the operator wrote back into them.
import { randomUUID } from 'node:crypto';
import { AppError, notFound } from '../../common/errors/index.js';
import {
  API_VERSION,
  AGENT_DEPLOYMENT,
  AGENT_REVISION,
  LABELS,
  type AgentDeploymentSpec,
  type AgentDeploymentStatus,
  type AgentRevisionSpec,
  type AgentRevisionStatus,
} from '../../common/resources/index.js';
import { KubeApiError, type KubeResources } from '../kube/index.js';
import type { ListenerService } from '../listeners/index.js';
import { CREATED_AT, createdAt, paginate, UPDATED_AT } from '../shared/index.js';
import type { Principal } from '../tenancy/index.js';
import {
  deploymentBody,
  deploymentStatus,
  isReconciled,
  revisionBody,
  revisionResource,
  revisionSecretName,
  type DeploymentResource,
  type NewRevision,
  type RevisionResource,
} from './resources.js';
import { createIssues, planPatch } from './rules.js';
import type {
  Deployment,
  DeploymentCreateRequest,
  DeploymentListQuery,
  DeploymentPatchRequest,
  Revision,
  RevisionListQuery,
  Secret,
} from './schemas.js';

const PATCH_ATTEMPTS = 5;

const newestFirst = (a: RevisionResource, b: RevisionResource) =>
  b.spec.revision_number - a.spec.revision_number;
const oldestFirst = (a: DeploymentResource, b: DeploymentResource) =>
  createdAt(a.metadata).localeCompare(createdAt(b.metadata)) ||
  a.metadata.name.localeCompare(b.metadata.name);

export class DeploymentService {
  constructor(
    private readonly kube: KubeResources,
    private readonly listeners: ListenerService,
  ) {}

  async create(principal: Principal, body: DeploymentCreateRequest): Promise<Deployment> {
    const issues = createIssues(body);
    if (issues.length) throw new AppError('VALIDATION', issues);
    const listenerId = (body.source_config.listener_id ?? '').toLowerCase();
    const namespace = body.source_config.listener_config?.k8s_namespace ?? '';
    const listener = await this.listeners.resource(principal, listenerId);
    const allowed = listener.spec.compute_config.k8s_namespaces;
    if (allowed?.length && !allowed.includes(namespace))
      throw new AppError('VALIDATION', [
        {
          loc: ['body', 'source_config', 'listener_config', 'k8s_namespace'],
          msg: `Namespace '${namespace}' is not one of the namespaces of listener ${listenerId}: ${allowed.join(', ')}`,
          type: 'value_error',
        },
      ]);
    // Without RBAC there, the write would be refused anyway; say why before trying.
    if (!this.kube.watches(namespace))
      throw new AppError('VALIDATION', [
        {
          loc: ['body', 'source_config', 'listener_config', 'k8s_namespace'],
          msg: `Namespace '${namespace}' is not managed by this control plane; it is limited to ${this.kube.watchNamespaces.join(', ')} (GRAPHDOCK_WATCH_NAMESPACES, the chart's watchNamespaces)`,
          type: 'value_error',
        },
      ]);

    const id = randomUUID();
    const revisionId = randomUUID();
    const now = new Date().toISOString();
    const spec: AgentDeploymentSpec = {
      workspace_id: principal.workspace.id,
      name: body.name,
      source: 'external_docker',
      source_config: {
        listener_id: listenerId,
        listener_config: { k8s_namespace: namespace },
        custom_url: body.source_config.custom_url ?? null,
        resource_spec: body.source_config.resource_spec ?? null,
      },
      source_revision_config: { image_uri: body.source_revision_config.image_uri ?? '' },
      secret_names: body.secrets.map((s) => s.name),
      latest_revision: { id: revisionId, number: 1 },
    };
    let deployment: DeploymentResource;
    try {
      deployment = await this.kube.create<AgentDeploymentSpec, AgentDeploymentStatus>(
        AGENT_DEPLOYMENT,
        {
          apiVersion: API_VERSION,
          kind: AGENT_DEPLOYMENT.kind,
          metadata: {
            name: id,
            namespace,
            labels: {
              [LABELS.workspaceId]: principal.workspace.id,
              [LABELS.deploymentId]: id,
              [LABELS.listenerId]: listenerId,
            },
            annotations: { [CREATED_AT]: now, [UPDATED_AT]: now },
          },
          spec,
        },
      );
    } catch (err) {
      if (err instanceof KubeApiError && err.status === 404)
        throw new AppError(
          'BAD_REQUEST',
          `Namespace '${namespace}' does not exist in the cluster of listener ${listenerId}.`,
        );
      throw err;
    }
    try {
      await this.writeRevision(
        deployment,
        {
          id: revisionId,
          number: 1,
          imageUri: spec.source_revision_config.image_uri,
          resourceSpec: spec.source_config.resource_spec,
          secretNames: spec.secret_names,
        },
        body.secrets,
      );
    } catch (err) {
      await this.kube.delete(AGENT_DEPLOYMENT, id, namespace).catch(() => undefined);
      throw err;
    }
    return deploymentBody(deployment, body.secrets);
  }

  async list(principal: Principal, query: DeploymentListQuery) {
    // Graphdock has no deployment tags, types or image versions: such filters match nothing.
    if (query.tag_value_ids?.length || query.deployment_type || query.image_version)
      return { resources: [], offset: query.offset };
    let items = await this.kube.list<AgentDeploymentSpec, AgentDeploymentStatus>(
      AGENT_DEPLOYMENT,
      `${LABELS.workspaceId}=${principal.workspace.id}`,
    );
    if (query.name_contains) {
      const needle = query.name_contains.toLowerCase();
      items = items.filter((d) => d.spec.name.toLowerCase().includes(needle));
    }
    if (query.deployment_ids) {
      const ids = new Set(query.deployment_ids.map((i) => i.toLowerCase()));
      items = items.filter((d) => ids.has(d.metadata.name));
    }
    if (query.remote_reconciled !== undefined)
      items = items.filter((d) => isReconciled(d) === query.remote_reconciled);
    if (query.status) {
      const wanted = new Set(query.status);
      items = items.filter((d) => wanted.has(deploymentStatus(d)));
    }
    const page = paginate(items.sort(oldestFirst), query);
    const resources = await Promise.all(page.resources.map((d) => this.body(d)));
    return { resources, offset: page.offset };
  }

  async get(principal: Principal, id: string): Promise<Deployment> {
    return this.body(await this.deployment(principal, id));
  }

  async patch(
    principal: Principal,
    id: string,
    patch: DeploymentPatchRequest,
  ): Promise<Deployment> {
    for (let attempt = 1; ; attempt++) {
      const current = await this.deployment(principal, id);
      const plan = planPatch(current.spec, patch);
      if (plan.issues.length) throw new AppError('VALIDATION', plan.issues);
      let secrets = plan.secrets;
      let revision: NewRevision | undefined;
      if (plan.newRevision) {
        secrets ??= await this.secretsOf(current);
        revision = {
          id: randomUUID(),
          number: current.spec.latest_revision.number + 1,
          imageUri: plan.imageUri,
          resourceSpec: plan.resourceSpec,
          secretNames: secrets.map((s) => s.name),
        };
        await this.writeRevision(current, revision, secrets);
      }
      const spec: AgentDeploymentSpec = {
        ...current.spec,
        source_config: {
          ...current.spec.source_config,
          custom_url: plan.customUrl ?? null,
          resource_spec: plan.resourceSpec ?? null,
        },
        source_revision_config: { image_uri: plan.imageUri },
        secret_names: revision?.secretNames ?? current.spec.secret_names,
        latest_revision: revision
          ? { id: revision.id, number: revision.number }
          : current.spec.latest_revision,
      };
      try {
        const updated = await this.applyDeployment(current, spec);
        return deploymentBody(updated, secrets ?? (await this.secretsOf(updated)));
      } catch (err) {
        // Another change landed between our read and write: undo our revision and start over.
        if (revision) await this.removeRevision(current, revision.id);
        if (err instanceof KubeApiError && err.status === 409 && attempt < PATCH_ATTEMPTS) continue;
        throw err;
      }
    }
  }

  async delete(principal: Principal, id: string): Promise<void> {
    const current = await this.deployment(principal, id);
    // Revisions (and their Secrets) are owned by the deployment and go with it.
    if (!(await this.kube.delete(AGENT_DEPLOYMENT, id, current.metadata.namespace)))
      throw notFound(`Deployment ID ${id} not found.`);
  }

  async listRevisions(principal: Principal, id: string, query: RevisionListQuery) {
    const deployment = await this.deployment(principal, id);
    let items = await this.revisions(deployment);
    if (query.status) {
      const wanted = new Set(query.status);
      items = items.filter((r) => wanted.has(revisionBody(r).status));
    }
    if (query.remote_reconciled !== undefined)
      items = items.filter((r) => isReconciled(r) === query.remote_reconciled);
    const page = paginate(items.sort(newestFirst), query);
    return { resources: page.resources.map(revisionBody), offset: page.offset };
  }

  async getRevision(principal: Principal, id: string, revisionId: string): Promise<Revision> {
    const deployment = await this.deployment(principal, id);
    return revisionBody(await this.revision(deployment, revisionId));
  }

  /** A new revision with the same image, resources and secrets as an earlier one. */
  async redeploy(principal: Principal, id: string, revisionId: string): Promise<Deployment> {
    for (let attempt = 1; ; attempt++) {
      const current = await this.deployment(principal, id);
      const source = await this.revision(current, revisionId);
      const secrets = await this.readSecrets(
        current,
        source.metadata.name,
        source.spec.secrets_ref.keys,
      );
      const revision: NewRevision = {
        id: randomUUID(),
        number: current.spec.latest_revision.number + 1,
        imageUri: source.spec.source_revision_config.image_uri,
        resourceSpec: source.spec.resource_spec,
        secretNames: secrets.map((s) => s.name),
        redeployOf: source.metadata.name,
      };
      await this.writeRevision(current, revision, secrets);
      const spec: AgentDeploymentSpec = {
        ...current.spec,
        source_config: {
          ...current.spec.source_config,
          resource_spec: revision.resourceSpec ?? null,
        },
        source_revision_config: { image_uri: revision.imageUri },
        secret_names: revision.secretNames,
        latest_revision: { id: revision.id, number: revision.number },
      };
      try {
        return deploymentBody(await this.applyDeployment(current, spec), secrets);
      } catch (err) {
        await this.removeRevision(current, revision.id);
        if (err instanceof KubeApiError && err.status === 409 && attempt < PATCH_ATTEMPTS) continue;
        throw err;
      }
    }
  }

  private async body(deployment: DeploymentResource): Promise<Deployment> {
    return deploymentBody(deployment, await this.secretsOf(deployment));
  }

  /** The workspace's deployment with this id; 404 for other workspaces' ids too. */
  private async deployment(principal: Principal, id: string): Promise<DeploymentResource> {
    const [found] = await this.kube.list<AgentDeploymentSpec, AgentDeploymentStatus>(
      AGENT_DEPLOYMENT,
      `${LABELS.workspaceId}=${principal.workspace.id},${LABELS.deploymentId}=${id.toLowerCase()}`,
    );
    if (!found) throw notFound(`Deployment ID ${id} not found.`);
    return found;
  }

  private revisions(deployment: DeploymentResource): Promise<RevisionResource[]> {
    return this.kube.list<AgentRevisionSpec, AgentRevisionStatus>(
      AGENT_REVISION,
      `${LABELS.workspaceId}=${deployment.spec.workspace_id},${LABELS.deploymentId}=${deployment.metadata.name}`,
    );
  }

  private async revision(deployment: DeploymentResource, revisionId: string) {
    const found = await this.kube.get<AgentRevisionSpec, AgentRevisionStatus>(
      AGENT_REVISION,
      revisionId.toLowerCase(),
      deployment.metadata.namespace,
    );
    if (!found || found.spec.deployment_id !== deployment.metadata.name)
      throw notFound(`Revision ID ${revisionId} not found.`);
    return found;
  }

  private secretsOf(deployment: DeploymentResource): Promise<Secret[]> {
    return this.readSecrets(
      deployment,
      deployment.spec.latest_revision.id,
      deployment.spec.secret_names,
    );
  }

  private async readSecrets(deployment: DeploymentResource, revisionId: string, names: string[]) {
    const data =
      (await this.kube.readSecret(
        deployment.metadata.namespace ?? '',
        revisionSecretName(revisionId),
      )) ?? {};
    return names.map((name) => ({ name, value: data[name] ?? '' }));
  }

  private async writeRevision(
    deployment: DeploymentResource,
    revision: NewRevision,
    secrets: Secret[],
  ) {
    const namespace = deployment.metadata.namespace ?? '';
    const secretName = revisionSecretName(revision.id);
    await this.kube.createSecret(
      namespace,
      secretName,
      Object.fromEntries(secrets.map((s) => [s.name, s.value])),
      {
        [LABELS.workspaceId]: deployment.spec.workspace_id,
        [LABELS.deploymentId]: deployment.metadata.name,
        [LABELS.revisionId]: revision.id,
      },
    );
    try {
      const created = await this.kube.create(
        AGENT_REVISION,
        revisionResource(deployment, revision),
      );
      await this.kube.setSecretOwner(namespace, secretName, {
        apiVersion: API_VERSION,
        kind: AGENT_REVISION.kind,
        name: revision.id,
        uid: created.metadata.uid ?? '',
      });
    } catch (err) {
      await this.removeRevision(deployment, revision.id);
      throw err;
    }
  }

  private async removeRevision(deployment: DeploymentResource, revisionId: string) {
    const namespace = deployment.metadata.namespace ?? '';
    await this.kube.delete(AGENT_REVISION, revisionId, namespace).catch(() => undefined);
    await this.kube.deleteSecret(namespace, revisionSecretName(revisionId)).catch(() => undefined);
  }

  /** Server-side apply guarded by the resourceVersion we read: a concurrent change gives 409. */
  private applyDeployment(current: DeploymentResource, spec: AgentDeploymentSpec) {
    return this.kube.apply<AgentDeploymentSpec, AgentDeploymentStatus>(AGENT_DEPLOYMENT, {
      apiVersion: API_VERSION,
      kind: AGENT_DEPLOYMENT.kind,
      metadata: {
        name: current.metadata.name,
        namespace: current.metadata.namespace,
        resourceVersion: current.metadata.resourceVersion,
        labels: current.metadata.labels,
        annotations: {
          [CREATED_AT]: createdAt(current.metadata),
          [UPDATED_AT]: new Date().toISOString(),
        },
      },
      spec,
    });
  }
}
