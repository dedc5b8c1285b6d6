// A list-then-watch cache of one kind. Unlike client-node's informer, which stops on any
// error other than 410, this one relists from scratch after every failure (with backoff) and
// resumes the watch from the last resourceVersion when the server merely closes it.
import {
  KubernetesObjectApi,
  Watch,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import type { Logger } from '../../common/logging/index.js';
import { describeError } from './errors.js';

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    deletionTimestamp?: Date | string;
    finalizers?: string[];
    managedFields?: unknown;
  };
}

/** managedFields are large and unused here: not keeping them halves the cache's memory. */
function slim<T extends KubeObject>(obj: T): T {
  if (obj.metadata?.managedFields) delete obj.metadata.managedFields;
  return obj;
}

export type InformerEvent = 'add' | 'update' | 'delete';

export interface InformerOptions {
  apiVersion: string;
  kind: string;
  /** e.g. /apis/apps/v1/deployments, or /apis/apps/v1/namespaces/a/deployments: the watch path. */
  path: string;
  /** Lists only this namespace (the path must be the matching namespaced one). */
  namespace?: string;
  labelSelector?: string;
  logger: Logger;
}

const MIN_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 15_000;

export const objectKey = (o: KubeObject) =>
  o.metadata?.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : (o.metadata?.name ?? '');

/** What the reconcilers read: a cache of one kind, fed by one or more informers. */
export interface ObjectCache<T extends KubeObject> {
  readonly synced: boolean;
  readonly failingSince: number | undefined;
  on(handler: (event: InformerEvent, obj: T) => void): void;
  get(key: string): T | undefined;
  list(): T[];
  start(): void;
  stop(): void;
}

export class Informer<T extends KubeObject> implements ObjectCache<T> {
  private readonly objects = new Map<string, T>();
  private readonly handlers: ((event: InformerEvent, obj: T) => void)[] = [];
  private readonly objectsApi: KubernetesObjectApi;
  private readonly watcher: Watch;
  private resourceVersion = '';
  private abort: AbortController | undefined;
  private stopped = true;
  private backoffMs = MIN_BACKOFF_MS;
  private retryTimer: NodeJS.Timeout | undefined;
  /** Set once the first list has been applied. */
  synced = false;
  /** Since when the informer has been failing, if it is. */
  failingSince: number | undefined;

  constructor(
    kubeConfig: KubeConfig,
    private readonly options: InformerOptions,
  ) {
    this.objectsApi = KubernetesObjectApi.makeApiClient(kubeConfig);
    this.watcher = new Watch(kubeConfig);
  }

  on(handler: (event: InformerEvent, obj: T) => void): void {
    this.handlers.push(handler);
  }

  get(key: string): T | undefined {
    return this.objects.get(key);
  }

  list(): T[] {
    return [...this.objects.values()];
  }

  start(): void {
    this.stopped = false;
    void this.run(true);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.abort?.abort();
  }

  private emit(event: InformerEvent, obj: T): void {
    for (const handler of this.handlers) handler(event, obj);
  }

  private async run(relist: boolean): Promise<void> {
    if (this.stopped) return;
    try {
      if (relist || !this.resourceVersion) await this.relist();
      this.abort = await this.watcher.watch(
        this.options.path,
        {
          resourceVersion: this.resourceVersion,
          allowWatchBookmarks: true,
          labelSelector: this.options.labelSelector,
          // The server ends the watch after this; we resume from the last resourceVersion.
          timeoutSeconds: 300,
        },
        (type, obj: T & { code?: number }) => this.onWatchEvent(type, obj),
        (err: unknown) => this.onWatchDone(err),
      );
    } catch (err) {
      this.fail(err);
    }
  }

  private async relist(): Promise<void> {
    const list = await this.objectsApi.list<KubernetesObject>(
      this.options.apiVersion,
      this.options.kind,
      this.options.namespace,
      undefined,
      undefined,
      undefined,
      undefined,
      this.options.labelSelector,
    );
    const seen = new Set<string>();
    for (const item of list.items) {
      const obj = slim({
        apiVersion: this.options.apiVersion,
        kind: this.options.kind,
        ...item,
      } as T);
      const key = objectKey(obj);
      seen.add(key);
      const previous = this.objects.get(key);
      this.objects.set(key, obj);
      if (!previous) this.emit('add', obj);
      else if (previous.metadata?.resourceVersion !== obj.metadata?.resourceVersion)
        this.emit('update', obj);
    }
    // Objects deleted while we were not watching.
    for (const [key, obj] of this.objects) {
      if (seen.has(key)) continue;
      this.objects.delete(key);
      this.emit('delete', obj);
    }
    this.resourceVersion = list.metadata?.resourceVersion ?? '';
    this.synced = true;
    this.failingSince = undefined;
    this.backoffMs = MIN_BACKOFF_MS;
  }

  private onWatchEvent(type: string, obj: T & { code?: number }): void {
    if (type === 'ERROR') {
      // 410 Gone: our resourceVersion is too old; anything else: start over as well.
      this.resourceVersion = '';
      this.abort?.abort();
      return;
    }
    if (obj.metadata?.resourceVersion) this.resourceVersion = obj.metadata.resourceVersion;
    if (type === 'BOOKMARK') return;
    slim(obj);
    const key = objectKey(obj);
    if (type === 'DELETED') {
      this.objects.delete(key);
      this.emit('delete', obj);
      return;
    }
    const existed = this.objects.has(key);
    this.objects.set(key, obj);
    this.emit(existed ? 'update' : 'add', obj);
    this.backoffMs = MIN_BACKOFF_MS;
    this.failingSince = undefined;
  }

  private onWatchDone(err: unknown): void {
    this.abort = undefined;
    if (this.stopped) return;
    if (err) return this.fail(err);
    // A clean close (server timeout): resume from where we were, relisting only if told to.
    void this.run(!this.resourceVersion);
  }

  private fail(err: unknown): void {
    if (this.stopped) return;
    this.failingSince ??= Date.now();
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
    this.options.logger.warn(
      { kind: this.options.kind, err: describeError(err), delay },
      'watch failed; relisting',
    );
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.run(true), delay);
  }
}
