// Compute shape of a deployment (`resource_spec` of the control-plane API), shared by the API
// request schemas and the custom resources so both validate the same way.
import { z } from 'zod';

const Replicas = z.number().int().min(0).max(1000).nullish();
const Cpu = z.number().positive().max(512).nullish();
const MemoryMb = z.number().int().positive().max(4_194_304).nullish();
const StringMap = z.record(z.string().max(316), z.string().max(4096)).nullish();
/** Kubernetes objects (volumes, containers) passed through to the pod spec as given. */
const KubeObject = z.record(z.string(), z.unknown());

export const ResourceSpec = z.object({
  min_scale: Replicas,
  max_scale: Replicas,
  cpu: Cpu,
  cpu_limit: Cpu,
  memory_mb: MemoryMb,
  memory_limit_mb: MemoryMb,
  queue_min_scale: Replicas,
  queue_max_scale: Replicas,
  queue_cpu: Cpu,
  queue_cpu_limit: Cpu,
  queue_memory_mb: MemoryMb,
  queue_memory_limit_mb: MemoryMb,
  redis_memory_mb: MemoryMb,
  labels: StringMap,
  annotations: StringMap,
  service_account_name: z.string().max(253).nullish(),
  image_pull_secrets: z
    .array(z.object({ name: z.string().max(253) }))
    .max(32)
    .nullish(),
  volumes: z.array(KubeObject).max(64).nullish(),
  volume_mounts: z.array(KubeObject).max(64).nullish(),
  init_containers: z.array(KubeObject).max(16).nullish(),
  sidecars: z.array(KubeObject).max(16).nullish(),
  db_cpu: Cpu,
  db_cpu_limit: Cpu,
  db_memory_mb: MemoryMb,
  db_memory_limit_mb: MemoryMb,
  db_storage_gi: z.number().int().positive().max(65_536).nullish(),
  db_max_connections: z.number().int().positive().max(100_000).nullish(),
});
export type ResourceSpec = z.infer<typeof ResourceSpec>;
