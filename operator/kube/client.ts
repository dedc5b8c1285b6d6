// Writes to the Kubernetes API, all under one field manager: server-side apply for objects and
// for custom resource status, deletes that tolerate absence, and Events on custom resources.
import {
  CoreV1Api,
  CustomObjectsApi,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type KubernetesObject,
  type V1OwnerReference,
  type V1Secret,
} from '@kubernetes/client-node';
import { isNotFound } from './errors.js';

const APPLY = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply);

export interface ResourceRef {
  group: string;
  version: string;
  plural: string;
  kind: string;
  name: string;
  namespace?: string;
  uid?: string;
}

export class KubeWriter {
  private readonly objects: KubernetesObjectApi;
  private readonly custom: CustomObjectsApi;
  private readonly core: CoreV1Api;

  constructor(
    kubeConfig: KubeConfig,
    readonly fieldManager: string,
  ) {
    this.objects = KubernetesObjectApi.makeApiClient(kubeConfig);
    this.custom = kubeConfig.makeApiClient(CustomObjectsApi);
    this.core = kubeConfig.makeApiClient(CoreV1Api);
  }

  /** Server-side apply of the complete intent of this manager for the object. */
  apply<T extends KubernetesObject>(obj: T): Promise<T> {
    return this.objects.patch(
      obj,
      undefined,
      undefined,
      this.fieldManager,
      true,
      PatchStrategy.ServerSideApply,
    );
  }

  /** Server-side apply to the status subresource of a custom resource. */
  async applyStatus(ref: ResourceRef, status: object): Promise<void> {
    const body = {
      apiVersion: `${ref.group}/${ref.version}`,
      kind: ref.kind,
      metadata: { name: ref.name, ...(ref.namespace ? { namespace: ref.namespace } : {}) },
      status,
    };
    const params = {
      group: ref.group,
      version: ref.version,
      plural: ref.plural,
      name: ref.name,
      body,
      fieldManager: this.fieldManager,
      force: true,
    };
    if (ref.namespace)
      await this.custom.patchNamespacedCustomObjectStatus(
        { ...params, namespace: ref.namespace },
        APPLY,
      );
    else await this.custom.patchClusterCustomObjectStatus(params, APPLY);
  }

  /** Server-side apply of metadata only (e.g. this manager's finalizer entry). */
  async applyMetadata(ref: ResourceRef, metadata: object): Promise<void> {
    await this.custom.patchNamespacedCustomObject(
      {
        group: ref.group,
        version: ref.version,
        plural: ref.plural,
        namespace: ref.namespace ?? '',
        name: ref.name,
        body: {
          apiVersion: `${ref.group}/${ref.version}`,
          kind: ref.kind,
          metadata: { name: ref.name, namespace: ref.namespace, ...metadata },
        },
        fieldManager: this.fieldManager,
        force: true,
      },
      APPLY,
    );
  }

  /** Deletes the object if it exists; true when something was deleted. */
  async deleteIfExists(obj: KubernetesObject): Promise<boolean> {
    try {
      await this.objects.delete(obj, undefined, undefined, undefined, undefined, 'Background');
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  /** Secrets matching the selector, in these namespaces (all namespaces when none are given). */
  async listSecrets(labelSelector: string, namespaces: readonly string[]): Promise<V1Secret[]> {
    if (!namespaces.length)
      return (await this.core.listSecretForAllNamespaces({ labelSelector })).items;
    const lists = await Promise.all(
      namespaces.map((namespace) => this.core.listNamespacedSecret({ namespace, labelSelector })),
    );
    return lists.flatMap((l) => l.items);
  }

  /** Makes `owner` the Secret's owner, conditional on the Secret being unchanged since read. */
  async setOwner(secret: V1Secret, owner: V1OwnerReference): Promise<void> {
    await this.core.patchNamespacedSecret(
      {
        namespace: secret.metadata?.namespace ?? '',
        name: secret.metadata?.name ?? '',
        body: {
          metadata: {
            ownerReferences: [owner],
            resourceVersion: secret.metadata?.resourceVersion,
          },
        },
        fieldManager: this.fieldManager,
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
  }

  async readSecret(namespace: string, name: string): Promise<Record<string, string> | undefined> {
    try {
      const secret = await this.core.readNamespacedSecret({ namespace, name });
      return Object.fromEntries(
        Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]),
      );
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** A Kubernetes Event on the object, as `kubectl describe` shows them. */
  async event(
    ref: ResourceRef,
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
  ): Promise<void> {
    const now = new Date();
    await this.core.createNamespacedEvent({
      namespace: ref.namespace ?? 'default',
      body: {
        metadata: { generateName: `${ref.name}.`, namespace: ref.namespace ?? 'default' },
        involvedObject: {
          apiVersion: `${ref.group}/${ref.version}`,
          kind: ref.kind,
          name: ref.name,
          namespace: ref.namespace,
          uid: ref.uid,
        },
        type,
        reason,
        message: message.slice(0, 1024),
        source: { component: this.fieldManager },
        reportingComponent: this.fieldManager,
        reportingInstance: this.fieldManager,
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
      },
    });
  }
}
