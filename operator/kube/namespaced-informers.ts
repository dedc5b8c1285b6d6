// One informer per watched namespace behind the interface of a single cache, so an operator
// limited to some namespaces needs list/watch only there (namespaced Roles, no ClusterRole).
import type { KubeConfig } from '@kubernetes/client-node';
import {
  Informer,
  type InformerEvent,
  type InformerOptions,
  type KubeObject,
  type ObjectCache,
} from './informer.js';

export interface KindOptions extends Omit<InformerOptions, 'path' | 'namespace'> {
  /** API path prefix, e.g. /apis/apps/v1 or /apis/graphdock.dev/v1alpha1. */
  apiPath: string;
  /** Plural resource name, e.g. deployments. */
  plural: string;
}

export class NamespacedInformers<T extends KubeObject> implements ObjectCache<T> {
  private readonly byNamespace = new Map<string, Informer<T>>();

  constructor(kubeConfig: KubeConfig, options: KindOptions, namespaces: readonly string[]) {
    const { apiPath, plural, ...rest } = options;
    for (const namespace of namespaces)
      this.byNamespace.set(
        namespace,
        new Informer<T>(kubeConfig, {
          ...rest,
          namespace,
          path: `${apiPath}/namespaces/${namespace}/${plural}`,
        }),
      );
  }

  get synced(): boolean {
    return [...this.byNamespace.values()].every((i) => i.synced);
  }

  /** The earliest failure of any namespace's informer still failing. */
  get failingSince(): number | undefined {
    const failing = [...this.byNamespace.values()]
      .map((i) => i.failingSince)
      .filter((t): t is number => t !== undefined);
    return failing.length ? Math.min(...failing) : undefined;
  }

  on(handler: (event: InformerEvent, obj: T) => void): void {
    for (const informer of this.byNamespace.values()) informer.on(handler);
  }

  /** Keys are namespace/name: the namespace picks the informer. */
  get(key: string): T | undefined {
    return this.byNamespace.get(key.split('/')[0] ?? '')?.get(key);
  }

  list(): T[] {
    return [...this.byNamespace.values()].flatMap((i) => i.list());
  }

  start(): void {
    for (const informer of this.byNamespace.values()) informer.start();
  }

  stop(): void {
    for (const informer of this.byNamespace.values()) informer.stop();
  }
}

/** A cluster-wide informer, or one per namespace when the operator is limited to some. */
export function namespacedKindCache<T extends KubeObject>(
  kubeConfig: KubeConfig,
  options: KindOptions,
  namespaces: readonly string[],
): ObjectCache<T> {
  if (namespaces.length) return new NamespacedInformers<T>(kubeConfig, options, namespaces);
  const { apiPath, plural, ...rest } = options;
  return new Informer<T>(kubeConfig, { ...rest, path: `${apiPath}/${plural}` });
}
