// Listeners live as cluster-scoped Listener resources; the API only translates and checks tenancy.
import { randomUUID } from 'node:crypto';
import { AppError, conflict, invalid, notFound } from '../../common/errors/index.js';
import {
  AGENT_DEPLOYMENT,
  API_VERSION,
  LABELS,
  LISTENER,
  listenerResourceName,
  type AgentDeploymentSpec,
  type AgentDeploymentStatus,
  type ListenerSpec,
  type ListenerStatus,
} from '../../common/resources/index.js';
import {
  KubeApiError,
  type CustomResource,
  type KubeResources,
  type ObjectMeta,
} from '../kube/index.js';
import { CREATED_AT, createdAt, paginate, UPDATED_AT, type Pagination } from '../shared/index.js';
import { SELF_HOSTED_ENTERPRISE_PLAN, type Principal } from '../tenancy/index.js';
import type { Listener, ListenerCreateRequest, ListenerPatchRequest } from './schemas.js';

export type ListenerResource = CustomResource<ListenerSpec, ListenerStatus>;

export function listenerBody(resource: ListenerResource): Listener {
  const { metadata, spec } = resource;
  const created = createdAt(metadata);
  return {
    id: metadata.labels?.[LABELS.listenerId] ?? '',
    version: spec.version ?? null,
    compute_type: spec.compute_type,
    compute_id: spec.compute_id,
    compute_config: { k8s_namespaces: spec.compute_config.k8s_namespaces ?? null },
    created_at: created,
    updated_at: metadata.annotations?.[UPDATED_AT] ?? created,
  };
}

/** Attempts of an update that raced another write to the listener (e.g. its heartbeat). */
const UPDATE_ATTEMPTS = 10;

/** How many deployment ids a refusal names before "and N more". */
const NAMED_DEPLOYMENTS = 5;

function describeDeployments(ids: string[]): string {
  const named = ids.slice(0, NAMED_DEPLOYMENTS).join(', ');
  return ids.length > NAMED_DEPLOYMENTS
    ? `${named} and ${ids.length - NAMED_DEPLOYMENTS} more`
    : named;
}

const byCreation = (a: ListenerResource, b: ListenerResource) =>
  createdAt(a.metadata).localeCompare(createdAt(b.metadata)) ||
  a.metadata.name.localeCompare(b.metadata.name);

export class ListenerService {
  constructor(private readonly kube: KubeResources) {}

  private requireEnterprise(principal: Principal, action: 'created' | 'used'): void {
    if (principal.organization.plan === SELF_HOSTED_ENTERPRISE_PLAN) return;
    const ws = principal.workspace.id;
    throw new AppError(
      'FORBIDDEN',
      `Listeners cannot be ${action} for workspace ID '${ws}'. ` +
        `${action === 'created' ? 'Creating' : 'Using'} listeners is only allowed for organizations with self-hosted enterprise plans.`,
    );
  }

  async create(principal: Principal, body: ListenerCreateRequest): Promise<Listener> {
    this.requireEnterprise(principal, 'created');
    const ws = principal.workspace.id;
    const now = new Date().toISOString();
    const resource: ListenerResource = {
      apiVersion: API_VERSION,
      kind: LISTENER.kind,
      metadata: {
        name: listenerResourceName(ws, body.compute_id),
        labels: { [LABELS.workspaceId]: ws, [LABELS.listenerId]: randomUUID() },
        annotations: { [CREATED_AT]: now, [UPDATED_AT]: now },
      },
      spec: {
        workspace_id: ws,
        compute_type: body.compute_type,
        compute_id: body.compute_id,
        compute_config: { k8s_namespaces: body.compute_config.k8s_namespaces ?? null },
        version: body.version ?? null,
      },
    };
    try {
      return listenerBody(await this.kube.create(LISTENER, resource));
    } catch (err) {
      // The name is derived from (workspace, compute_id): the API server's own conflict check
      // is the uniqueness rule, so concurrent creates cannot both succeed.
      if (err instanceof KubeApiError && err.status === 409)
        throw new AppError(
          'CONFLICT',
          `Listener for workspace ID '${ws}' and compute ID '${body.compute_id}' already exists.`,
        );
      throw err;
    }
  }

  async list(principal: Principal, pagination: Pagination) {
    const items = await this.kube.list<ListenerSpec, ListenerStatus>(
      LISTENER,
      `${LABELS.workspaceId}=${principal.workspace.id}`,
    );
    const page = paginate(items.sort(byCreation), pagination);
    return { resources: page.resources.map(listenerBody), offset: page.offset };
  }

  /** The workspace's listener with this id; 404 for ids of other workspaces too. */
  async resource(principal: Principal, id: string): Promise<ListenerResource> {
    const [found] = await this.kube.list<ListenerSpec, ListenerStatus>(
      LISTENER,
      `${LABELS.workspaceId}=${principal.workspace.id},${LABELS.listenerId}=${id.toLowerCase()}`,
    );
    if (!found) throw notFound(`Listener ID ${id} not found.`);
    return found;
  }

  async get(principal: Principal, id: string): Promise<Listener> {
    this.requireEnterprise(principal, 'used');
    return listenerBody(await this.resource(principal, id));
  }

  /** PATCH: fields sent replace stored ones; `compute_type`/`compute_id` may only be restated. */
  patch(principal: Principal, id: string, body: ListenerPatchRequest): Promise<Listener> {
    return this.update(principal, id, body, (current) => ({
      ...current,
      version: body.version !== undefined ? body.version : current.version,
      compute_config:
        body.compute_config != null
          ? { k8s_namespaces: body.compute_config.k8s_namespaces ?? null }
          : current.compute_config,
    }));
  }

  /** PUT: the listener becomes the body (an omitted `version` is null), with the same rules. */
  replace(principal: Principal, id: string, body: ListenerCreateRequest): Promise<Listener> {
    return this.update(principal, id, body, (current) => ({
      ...current,
      version: body.version ?? null,
      compute_config: { k8s_namespaces: body.compute_config.k8s_namespaces ?? null },
    }));
  }

  private async update(
    principal: Principal,
    id: string,
    body: { compute_type?: string; compute_id?: string },
    next: (current: ListenerSpec) => ListenerSpec,
  ): Promise<Listener> {
    this.requireEnterprise(principal, 'used');
    for (let attempt = 1; ; attempt++) {
      const current = await this.resource(principal, id);
      for (const field of ['compute_type', 'compute_id'] as const) {
        if (body[field] !== undefined && body[field] !== current.spec[field])
          throw invalid(
            ['body', field],
            `${field} cannot be changed once the listener is created`,
            'immutable',
          );
      }
      const spec = next(current.spec);
      const namespaces = spec.compute_config.k8s_namespaces;
      if (namespaces?.length) await this.refuseOrphaning(id, namespaces);
      // managedFields stay as the API server keeps them; sending them back would overwrite them.
      const metadata: ObjectMeta & { managedFields?: unknown } = { ...current.metadata };
      delete metadata.managedFields;
      try {
        const replaced = await this.kube.replace<ListenerSpec, ListenerStatus>(LISTENER, {
          apiVersion: API_VERSION,
          kind: LISTENER.kind,
          metadata: {
            ...metadata,
            annotations: {
              ...metadata.annotations,
              [CREATED_AT]: createdAt(current.metadata),
              [UPDATED_AT]: new Date().toISOString(),
            },
          },
          spec,
        });
        return listenerBody(replaced);
      } catch (err) {
        // The operator's heartbeat (status) changed the resourceVersion since our read.
        if (err instanceof KubeApiError && err.status === 409 && attempt < UPDATE_ATTEMPTS)
          continue;
        throw err;
      }
    }
  }

  async delete(principal: Principal, id: string): Promise<void> {
    this.requireEnterprise(principal, 'used');
    const current = await this.resource(principal, id);
    // Deployments placed on a listener would be left running with nobody serving them.
    const using = await this.deploymentsUsing(id);
    if (using.length)
      throw conflict(
        `Listener ID ${id} cannot be deleted: ${using.length} deployment(s) still use it ` +
          `(${describeDeployments(using.map((d) => d.metadata.name))}). Delete them first.`,
      );
    if (!(await this.kube.delete(LISTENER, current.metadata.name)))
      throw notFound(`Listener ID ${id} not found.`);
  }

  /** Refuses a namespace list that leaves existing deployments outside their listener. */
  private async refuseOrphaning(id: string, namespaces: string[]): Promise<void> {
    const stranded = (await this.deploymentsUsing(id)).filter(
      (d) => !namespaces.includes(d.metadata.namespace ?? ''),
    );
    if (!stranded.length) return;
    const lost = [...new Set(stranded.map((d) => d.metadata.namespace ?? ''))].sort();
    throw conflict(
      `Namespace(s) ${lost.map((n) => `'${n}'`).join(', ')} cannot be removed from listener ID ${id}: ` +
        `${stranded.length} deployment(s) run there (${describeDeployments(stranded.map((d) => d.metadata.name))}). ` +
        'Delete them first.',
    );
  }

  /** Deployments on this listener, except those already being deleted (cleanup needs no listener). */
  private async deploymentsUsing(id: string) {
    const all = await this.kube.list<AgentDeploymentSpec, AgentDeploymentStatus>(
      AGENT_DEPLOYMENT,
      `${LABELS.listenerId}=${id.toLowerCase()}`,
    );
    return all.filter((d) => !d.metadata.deletionTimestamp);
  }
}
