// The custom resources and their Secrets in the Kubernetes API, which is their source of truth.
// Writes after creation replace the whole object (PUT) conditional on the resourceVersion read,
// or merge-patch annotations; all under one field manager.
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1OwnerReference,
} from '@kubernetes/client-node';
import { API_VERSION, GROUP, VERSION, type ResourceKind } from '../../common/resources/index.js';

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  creationTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: V1OwnerReference[];
  deletionTimestamp?: string;
}

export interface CustomResource<Spec, Status> {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec: Spec;
  status?: Status;
}

/** What a request tried to do, so a refusal (403) can say which permission is missing. */
export interface KubeAction {
  verb: 'get' | 'list' | 'create' | 'update' | 'patch' | 'delete';
  /** e.g. `agentdeployments.graphdock.dev`, `secrets`. */
  resource: string;
  /** Absent: cluster-scoped, or across all namespaces. */
  namespace?: string;
}

/** The Kubernetes API refused a request; `status` is its HTTP status, `reason` its Status reason. */
export class KubeApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
    options?: { cause?: unknown; action?: KubeAction },
  ) {
    super(message, options);
    this.name = 'KubeApiError';
    this.action = options?.action;
  }

  readonly action: KubeAction | undefined;
}

function statusBody(body: unknown): { reason?: string; message?: string } {
  if (typeof body === 'string') {
    try {
      return JSON.parse(body) as { reason?: string; message?: string };
    } catch {
      return { message: body };
    }
  }
  return body ?? {};
}

const THROTTLE_ATTEMPTS = 5;
const MAX_RETRY_AFTER_MS = 2_000;

function translate(err: unknown, action: KubeAction): unknown {
  if (err instanceof ApiException) {
    const status = statusBody(err.body);
    return new KubeApiError(err.code, status.reason ?? '', status.message ?? err.message, {
      cause: err,
      action,
    });
  }
  // Connection failures (refused, reset, TLS) mean the API server is not reachable right now.
  if (err instanceof Error && err.name === 'FetchError')
    return new KubeApiError(503, 'Unavailable', err.message, { cause: err });
  return err;
}

function retryAfterMs(err: KubeApiError): number {
  const header = (err.cause as ApiException<unknown> | undefined)?.headers?.['retry-after'];
  const seconds = Number(header ?? 1);
  return Math.min(Number.isFinite(seconds) ? seconds * 1000 : 1000, MAX_RETRY_AFTER_MS);
}

/**
 * Calls the Kubernetes API, turning its failures into KubeApiError. A 429 (throttled, or a
 * resource's storage still initialising) means the request was not processed, so it is retried
 * after the server's Retry-After, as client-go does.
 */
async function kube<T>(action: KubeAction, call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      const translated = translate(err, action);
      if (
        translated instanceof KubeApiError &&
        translated.status === 429 &&
        attempt < THROTTLE_ATTEMPTS
      ) {
        await new Promise((resolve) => setTimeout(resolve, retryAfterMs(translated)));
        continue;
      }
      throw translated;
    }
  }
}

const isStatus = (err: unknown, code: number) => err instanceof KubeApiError && err.status === code;

const customResource = (kind: ResourceKind) => `${kind.plural}.${GROUP}`;

export class KubeResources {
  private readonly custom: CustomObjectsApi;
  private readonly core: CoreV1Api;

  /** `watchNamespaces` empty: namespaced kinds are listed across all namespaces at once. */
  constructor(
    kubeConfig: KubeConfig,
    private readonly fieldManager: string,
    readonly watchNamespaces: readonly string[] = [],
  ) {
    this.custom = kubeConfig.makeApiClient(CustomObjectsApi);
    this.core = kubeConfig.makeApiClient(CoreV1Api);
  }

  /** Creates the object; a KubeApiError with status 409 when its name is taken. */
  async create<S, T>(kind: ResourceKind, obj: CustomResource<S, T>): Promise<CustomResource<S, T>> {
    const base = { group: GROUP, version: VERSION, plural: kind.plural, body: obj };
    const params = { ...base, fieldManager: this.fieldManager };
    const action = {
      verb: 'create',
      resource: customResource(kind),
      namespace: obj.metadata.namespace,
    } as const;
    return kube(action, () =>
      obj.metadata.namespace
        ? this.custom.createNamespacedCustomObject({ ...params, namespace: obj.metadata.namespace })
        : this.custom.createClusterCustomObject(params),
    ) as Promise<CustomResource<S, T>>;
  }

  /**
   * Replaces the whole object (PUT). Its `metadata.resourceVersion` makes the write conditional:
   * a change since that read is a KubeApiError with status 409.
   */
  async replace<S, T>(
    kind: ResourceKind,
    obj: CustomResource<S, T>,
  ): Promise<CustomResource<S, T>> {
    const params = {
      group: GROUP,
      version: VERSION,
      plural: kind.plural,
      name: obj.metadata.name,
      body: { apiVersion: API_VERSION, kind: kind.kind, metadata: obj.metadata, spec: obj.spec },
      fieldManager: this.fieldManager,
    };
    const action = {
      verb: 'update',
      resource: customResource(kind),
      namespace: obj.metadata.namespace,
    } as const;
    return kube(action, () =>
      obj.metadata.namespace
        ? this.custom.replaceNamespacedCustomObject({
            ...params,
            namespace: obj.metadata.namespace,
          })
        : this.custom.replaceClusterCustomObject(params),
    ) as Promise<CustomResource<S, T>>;
  }

  /**
   * JSON merge patch of annotations (null removes one). With `resourceVersion`, conditional on
   * the object being unchanged since that read (409 otherwise).
   */
  async annotate(
    kind: ResourceKind,
    name: string,
    namespace: string,
    annotations: Record<string, string | null>,
    resourceVersion?: string,
  ): Promise<CustomResource<unknown, unknown>> {
    const action = { verb: 'patch', resource: customResource(kind), namespace } as const;
    return kube(action, () =>
      this.custom.patchNamespacedCustomObject(
        {
          group: GROUP,
          version: VERSION,
          plural: kind.plural,
          namespace,
          name,
          body: { metadata: { annotations, ...(resourceVersion ? { resourceVersion } : {}) } },
          fieldManager: this.fieldManager,
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    ) as Promise<CustomResource<unknown, unknown>>;
  }

  async get<S, T>(
    kind: ResourceKind,
    name: string,
    namespace?: string,
  ): Promise<CustomResource<S, T> | undefined> {
    const params = { group: GROUP, version: VERSION, plural: kind.plural, name };
    try {
      return (await kube({ verb: 'get', resource: customResource(kind), namespace }, () =>
        namespace
          ? this.custom.getNamespacedCustomObject({ ...params, namespace })
          : this.custom.getClusterCustomObject(params),
      )) as CustomResource<S, T>;
    } catch (err) {
      if (isStatus(err, 404)) return undefined;
      throw err;
    }
  }

  /**
   * Every object of a kind matching the label selector: across all namespaces, or, limited to
   * watch namespaces, one list per namespace merged (needs list only there).
   */
  async list<S, T>(kind: ResourceKind, labelSelector: string): Promise<CustomResource<S, T>[]> {
    const params = { group: GROUP, version: VERSION, plural: kind.plural, labelSelector };
    const resource = customResource(kind);
    if (kind.scope === 'Namespaced' && this.watchNamespaces.length) {
      const lists = await Promise.all(
        this.watchNamespaces.map(
          (namespace) =>
            kube({ verb: 'list', resource, namespace }, () =>
              this.custom.listNamespacedCustomObject({ ...params, namespace }),
            ) as Promise<{ items: CustomResource<S, T>[] }>,
        ),
      );
      return lists.flatMap((l) => l.items);
    }
    const list = (await kube({ verb: 'list', resource }, () =>
      kind.scope === 'Cluster'
        ? this.custom.listClusterCustomObject(params)
        : this.custom.listCustomObjectForAllNamespaces(params),
    )) as { items: CustomResource<S, T>[] };
    return list.items;
  }

  /** True when this api may place namespaced objects there (always, without watch namespaces). */
  watches(namespace: string): boolean {
    return !this.watchNamespaces.length || this.watchNamespaces.includes(namespace);
  }

  /** Deletes the object; false when it was already gone. */
  async delete(kind: ResourceKind, name: string, namespace?: string): Promise<boolean> {
    const params = { group: GROUP, version: VERSION, plural: kind.plural, name };
    try {
      await kube({ verb: 'delete', resource: customResource(kind), namespace }, () =>
        namespace
          ? this.custom.deleteNamespacedCustomObject({
              ...params,
              namespace,
              propagationPolicy: 'Background',
            })
          : this.custom.deleteClusterCustomObject({ ...params, propagationPolicy: 'Background' }),
      );
      return true;
    } catch (err) {
      if (isStatus(err, 404)) return false;
      throw err;
    }
  }

  /** Creates the Secret owned by `owner`, so it never outlives the object that uses it. */
  async createSecret(
    namespace: string,
    name: string,
    data: Record<string, string>,
    labels: Record<string, string>,
    owner: V1OwnerReference,
  ): Promise<void> {
    await kube({ verb: 'create', resource: 'secrets', namespace }, () =>
      this.core.createNamespacedSecret({
        namespace,
        fieldManager: this.fieldManager,
        body: {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name, namespace, labels, ownerReferences: [owner] },
          type: 'Opaque',
          stringData: data,
        },
      }),
    );
  }

  async readSecret(namespace: string, name: string): Promise<Record<string, string> | undefined> {
    try {
      const secret = await kube({ verb: 'get', resource: 'secrets', namespace }, () =>
        this.core.readNamespacedSecret({ namespace, name }),
      );
      return Object.fromEntries(
        Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]),
      );
    } catch (err) {
      if (isStatus(err, 404)) return undefined;
      throw err;
    }
  }

  async deleteSecret(namespace: string, name: string): Promise<void> {
    try {
      await kube({ verb: 'delete', resource: 'secrets', namespace }, () =>
        this.core.deleteNamespacedSecret({ namespace, name }),
      );
    } catch (err) {
      if (!isStatus(err, 404)) throw err;
    }
  }

  /** Cheap reachability probe for readiness. */
  async ping(): Promise<void> {
    await kube({ verb: 'get', resource: `apiresources.${GROUP}` }, () =>
      this.custom.getAPIResources({ group: GROUP, version: VERSION }),
    );
  }
}
