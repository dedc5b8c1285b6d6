// Wire shapes of /v2/listeners, as the control-plane API v2 defines them.
import { z } from 'zod';
import { storableString } from '../../common/json/index.js';
import { NamespaceName } from '../shared/index.js';

/** ListenerComputeConfig with namespaces that Kubernetes would accept. */
const ListenerComputeConfig = z.object({
  k8s_namespaces: z.array(NamespaceName).max(256).nullish(),
});

export const ListenerCreateRequest = z.object({
  version: storableString().max(128).nullish(),
  compute_type: z.literal('k8s'),
  compute_id: storableString().min(1).max(253),
  compute_config: ListenerComputeConfig,
});
export type ListenerCreateRequest = z.infer<typeof ListenerCreateRequest>;

export const ListenerPatchRequest = z.object({
  version: storableString().max(128).nullish(),
  compute_config: ListenerComputeConfig.nullish(),
  // Listed only to refuse a change with a clear message instead of silently ignoring it.
  compute_type: z.string().optional(),
  compute_id: z.string().optional(),
});
export type ListenerPatchRequest = z.infer<typeof ListenerPatchRequest>;

export const Listener = z.object({
  id: z.uuid(),
  version: z.string().nullable(),
  compute_type: z.literal('k8s'),
  compute_id: z.string(),
  compute_config: z.object({ k8s_namespaces: z.array(z.string()).nullable() }),
  created_at: z.string(),
  updated_at: z.string(),
});
export type Listener = z.infer<typeof Listener>;

export const ListenerIdParams = z.object({ listener_id: z.uuid() });
