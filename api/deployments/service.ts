// Deployments and revisions, stored as AgentDeployment and AgentRevision resources in the
// listener's namespace. Status is whatever the operator wrote back into them.
//
// Writes are ordered so that a process killed between any two leaves nothing a reader sees and
// nothing the operator cannot remove (docs/control-plane.md, "Crash safety"):
// - create: the deployment (marked pending), its revision (owned by it), the revision's Secret
//   (owned by the revision), then the pending mark is cleared. Pending deployments are hidden.
// - new revision: the revision (marked pending, owned by the deployment), its Secret (owned by
//   it), the deployment replaced to point at it (conditional on the resourceVersion read), then
//   the mark cleared. A pending revision the deployment does not point at is hidden.
import { randomUUID } from 'node:crypto';
import { AppError, notFound } from '../../common/errors/index.js';
import {
  API_VERSION,
  AGENT_DEPLOYMENT,
  AGENT_REVISION,
  LABELS,
  PENDING_ANNOTATION,
  type AgentDeploymentSpec,
  type AgentDeploymentStatus,
  type AgentRevisionSpec,
  type AgentRevisionStatus,
} from '../../common/resources/index.js';
import { KubeApiError, type KubeResources, type ObjectMeta } from '../kube/index.js';
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
import { createIssues, planPatch, unmaskSecrets } from './rules.js';
import type {
  Deployment,
  DeploymentCreateRequest,
  DeploymentListQuery,
  DeploymentPatchRequest,
  Revision,
  RevisionListQuery,
  Secret,
} from './schemas.js';

/** Attempts of a PATCH or redeploy that lost a race to a concurrent change of the deployment. */
const WRITE_ATTEMPTS = 30;
/**
 * A write sequence that took longer than this is abandoned before it commits: the operator
 * removes pending objects older than its grace period (default 120 s), and must never remove one
 * that is about to be committed.
 */
const COMMIT_DEADLINE_MS = 10_000;

const newestFirst = (a: RevisionResource, b: RevisionResource) =>
  b.spec.revision_number - a.spec.revision_number;
const oldestFirst = (a: DeploymentResource, b: DeploymentResource) =>
  createdAt(a.metadata).localeCompare(createdAt(b.metadata)) ||
  a.metadata.name.localeCompare(b.metadata.name);
const isPending = (r: { metadata: { annotations?: Record<string, string> } }) =>
  r.metadata.annotations?.[PENDING_ANNOTATION] !== undefined;
/** A revision readers see: committed, or the one its deployment points at. */
const isVisible = (deployment: DeploymentResource, revision: RevisionResource) =>
  !isPending(revision) || revision.metadata.name === deployment.spec.latest_revision.id;
const isConflict = (err: unknown) => err instanceof KubeApiError && err.status === 409;
/** Jittered, growing pause between attempts, so racing writers spread out. */
const backoff = (attempt: number) =>
  new Promise((resolve) =>
    setTimeout(resolve, Math.random() * Math.min(20 * 2 ** Math.min(attempt, 5), 500)),
  );

function checkDeadline(started: number) {
  if (Date.now() - started > COMMIT_DEADLINE_MS)
    throw new KubeApiError(503, 'Timeout', 'The Kubernetes API was too slow to finish the write');
}

/** A change that makes a new revision, decided from the deployment as read. */
interface RevisionChange {
  revision: NewRevision;
  secrets: Secret[];
  spec: AgentDeploymentSpec;
}

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

    const started = Date.now();
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
            annotations: { [CREATED_AT]: now, [UPDATED_AT]: now, [PENDING_ANNOTATION]: now },
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
        false,
      );
      checkDeadline(started);
      // The commit: from here on the deployment exists for readers and the operator.
      deployment = (await this.kube.annotate(
        AGENT_DEPLOYMENT,
        id,
        namespace,
        { [PENDING_ANNOTATION]: null },
        deployment.metadata.resourceVersion,
      )) as DeploymentResource;
    } catch (err) {
      // Owner references take the revision and its Secret along.
      await this.kube.delete(AGENT_DEPLOYMENT, id, namespace).catch(() => undefined);
      throw err;
    }
    return deploymentBody(deployment);
  }

  async list(principal: Principal, query: DeploymentListQuery) {
    // Graphdock has no deployment tags, types or image versions: such filters match nothing.
    if (query.tag_value_ids?.length || query.deployment_type || query.image_version)
      return { resources: [], offset: query.offset };
    let items = (
      await this.kube.list<AgentDeploymentSpec, AgentDeploymentStatus>(
        AGENT_DEPLOYMENT,
        `${LABELS.workspaceId}=${principal.workspace.id}`,
      )
    ).filter((d) => !isPending(d));
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
    return { resources: page.resources.map(deploymentBody), offset: page.offset };
  }

  async get(principal: Principal, id: string): Promise<Deployment> {
    return deploymentBody(await this.deployment(principal, id));
  }

  async patch(
    principal: Principal,
    id: string,
    patch: DeploymentPatchRequest,
  ): Promise<Deployment> {
    return this.change(principal, id, async (current) => {
      const plan = planPatch(current.spec, patch);
      if (plan.issues.length) throw new AppError('VALIDATION', plan.issues);
      const spec: AgentDeploymentSpec = {
        ...current.spec,
        source_config: {
          ...current.spec.source_config,
          custom_url: plan.customUrl ?? null,
          resource_spec: plan.resourceSpec ?? null,
        },
        source_revision_config: { image_uri: plan.imageUri },
      };
      if (!plan.newRevision) return spec;
      const stored = await this.secretsOf(current);
      let secrets = stored;
      if (plan.secrets) {
        const unmasked = unmaskSecrets(plan.secrets, stored);
        if (unmasked.issues.length) throw new AppError('VALIDATION', unmasked.issues);
        secrets = unmasked.secrets;
      }
      const revision: NewRevision = {
        id: randomUUID(),
        number: current.spec.latest_revision.number + 1,
        imageUri: plan.imageUri,
        resourceSpec: plan.resourceSpec,
        secretNames: secrets.map((s) => s.name),
      };
      return { revision, secrets, spec };
    });
  }

  async delete(principal: Principal, id: string): Promise<void> {
    const current = await this.deployment(principal, id);
    // Revisions (and their Secrets) are owned by the deployment and go with it.
    if (!(await this.kube.delete(AGENT_DEPLOYMENT, id, current.metadata.namespace)))
      throw notFound(`Deployment ID ${id} not found.`);
  }

  async listRevisions(principal: Principal, id: string, query: RevisionListQuery) {
    const deployment = await this.deployment(principal, id);
    let items = (await this.revisions(deployment)).filter((r) => isVisible(deployment, r));
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
    return this.change(principal, id, async (current) => {
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
      const spec: AgentDeploymentSpec = {
        ...current.spec,
        source_config: {
          ...current.spec.source_config,
          resource_spec: revision.resourceSpec ?? null,
        },
        source_revision_config: { image_uri: revision.imageUri },
      };
      return { revision, secrets, spec };
    });
  }

  /**
   * Read, decide, write: `decide` returns the deployment's new spec, with a new revision when
   * the change needs one. The deployment is replaced only if unchanged since the read, so
   * concurrent changes never share a revision number; a loser undoes its revision and starts
   * over from a fresh read, a bounded number of times.
   */
  private async change(
    principal: Principal,
    id: string,
    decide: (current: DeploymentResource) => Promise<AgentDeploymentSpec | RevisionChange>,
  ): Promise<Deployment> {
    for (let attempt = 1; ; attempt++) {
      const current = await this.deployment(principal, id);
      const decided = await decide(current);
      const started = Date.now();
      const change = 'revision' in decided ? decided : undefined;
      let spec = 'revision' in decided ? decided.spec : decided;
      try {
        if (change) {
          // Committed already (it is the latest), but a crash may have left its mark: clear it
          // before pointing away, so the operator never takes it for an orphan.
          await this.clearPending(current, current.spec.latest_revision.id);
          await this.writeRevision(current, change.revision, change.secrets, true);
          spec = {
            ...spec,
            secret_names: change.revision.secretNames,
            latest_revision: { id: change.revision.id, number: change.revision.number },
          };
          checkDeadline(started);
        }
        const updated = await this.replaceDeployment(current, spec);
        // Committed. The mark is only tidiness now (a pointed-at revision is never an orphan),
        // so failing to clear it fails nothing; the next change clears it.
        if (change) await this.clearPending(updated, change.revision.id).catch(() => undefined);
        return deploymentBody(updated);
      } catch (err) {
        // Another change landed between our read and write: undo our revision and start over.
        if (change) await this.removeRevision(current, change.revision.id);
        if (isConflict(err) && attempt < WRITE_ATTEMPTS) {
          await backoff(attempt);
          continue;
        }
        throw err;
      }
    }
  }

  /** The workspace's deployment with this id; 404 for other workspaces' ids too. */
  private async deployment(principal: Principal, id: string): Promise<DeploymentResource> {
    const [found] = await this.kube.list<AgentDeploymentSpec, AgentDeploymentStatus>(
      AGENT_DEPLOYMENT,
      `${LABELS.workspaceId}=${principal.workspace.id},${LABELS.deploymentId}=${id.toLowerCase()}`,
    );
    if (!found || isPending(found)) throw notFound(`Deployment ID ${id} not found.`);
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
    if (
      !found ||
      found.spec.deployment_id !== deployment.metadata.name ||
      !isVisible(deployment, found)
    )
      throw notFound(`Revision ID ${revisionId} not found.`);
    return found;
  }

  /** The latest revision's secrets with their values: carried into a new revision. */
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

  /** The revision, then its Secret owned by it: the Secret can never outlive the revision. */
  private async writeRevision(
    deployment: DeploymentResource,
    revision: NewRevision,
    secrets: Secret[],
    pending: boolean,
  ) {
    const namespace = deployment.metadata.namespace ?? '';
    const resource = revisionResource(deployment, revision);
    if (pending) resource.metadata.annotations![PENDING_ANNOTATION] = new Date().toISOString();
    try {
      const created = await this.kube.create(AGENT_REVISION, resource);
      await this.kube.createSecret(
        namespace,
        revisionSecretName(revision.id),
        Object.fromEntries(secrets.map((s) => [s.name, s.value])),
        {
          [LABELS.workspaceId]: deployment.spec.workspace_id,
          [LABELS.deploymentId]: deployment.metadata.name,
          [LABELS.revisionId]: revision.id,
        },
        {
          apiVersion: API_VERSION,
          kind: AGENT_REVISION.kind,
          name: revision.id,
          uid: created.metadata.uid ?? '',
        },
      );
    } catch (err) {
      await this.removeRevision(deployment, revision.id);
      throw err;
    }
  }

  private async clearPending(deployment: DeploymentResource, revisionId: string) {
    const namespace = deployment.metadata.namespace ?? '';
    const revision = await this.kube.get(AGENT_REVISION, revisionId, namespace);
    if (revision && isPending(revision))
      await this.kube.annotate(AGENT_REVISION, revisionId, namespace, {
        [PENDING_ANNOTATION]: null,
      });
  }

  private async removeRevision(deployment: DeploymentResource, revisionId: string) {
    const namespace = deployment.metadata.namespace ?? '';
    await this.kube.delete(AGENT_REVISION, revisionId, namespace).catch(() => undefined);
    await this.kube.deleteSecret(namespace, revisionSecretName(revisionId)).catch(() => undefined);
  }

  /**
   * The whole object replaced (not server-side applied): the spec is exactly what we decided,
   * so no field a former write set can survive. Conditional on the resourceVersion read.
   */
  private replaceDeployment(current: DeploymentResource, spec: AgentDeploymentSpec) {
    // managedFields stay as the API server keeps them; sending them back would overwrite them.
    const metadata: ObjectMeta & { managedFields?: unknown } = { ...current.metadata };
    delete metadata.managedFields;
    return this.kube.replace<AgentDeploymentSpec, AgentDeploymentStatus>(AGENT_DEPLOYMENT, {
      apiVersion: API_VERSION,
      kind: AGENT_DEPLOYMENT.kind,
      metadata: {
        ...metadata,
        annotations: {
          ...current.metadata.annotations,
          [CREATED_AT]: createdAt(current.metadata),
          [UPDATED_AT]: new Date().toISOString(),
        },
      },
      spec,
    });
  }
}
