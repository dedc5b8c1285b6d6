// What an AgentDeployment becomes, as complete server-side-apply intents: pure functions of the
// deployment, its revision and the operator's settings.
import type {
  KubernetesObject,
  V1Deployment,
  V2HorizontalPodAutoscaler,
  V1PodDisruptionBudget,
  V1Secret,
  V1Service,
} from '@kubernetes/client-node';
import { runShutdownGraceSeconds } from '../../common/config/index.js';
import type { ResourceSpec } from '../../common/resources/index.js';
import {
  AGENT_DEPLOYMENT,
  API_VERSION,
  TRACE_KEY_FIELDS,
  traceKeySecretName,
} from '../../common/resources/index.js';
import {
  commonLabels,
  databaseSecretName,
  envSecretName,
  REVISION_ANNOTATION,
  selectorLabels,
  SERVER_PORT,
  workloadName,
} from './names.js';
import type { AgentDeployment, AgentRevision } from './types.js';

/** Longer than endpoint removal takes to reach kube-proxy. */
export const SHUTDOWN_DRAIN_SECONDS = 5;
/**
 * What a runtime does after its runs' grace: hand back the runs left (waiting up to 5 s for
 * their writes), finish answers in flight (5 s), close idle connections (2 s), flush webhooks
 * (5 s) and its pool.
 */
const SHUTDOWN_TAIL_SECONDS = 20;

/**
 * How long kubelet lets a pod stop before it kills it: the drain, the grace the runtime gives
 * its runs (the deployment's BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS), and what follows. Kubernetes'
 * default of 30 s killed runs the runtime meant to let finish, and a killed attempt counts
 * towards BG_JOB_MAX_ATTEMPTS where a run handed back does not.
 */
export function terminationGraceSeconds(env: Record<string, string>): number {
  return Math.ceil(SHUTDOWN_DRAIN_SECONDS + runShutdownGraceSeconds(env) + SHUTDOWN_TAIL_SECONDS);
}

export interface WorkloadSettings {
  progressDeadlineSeconds: number;
  /**
   * Base URL of `graphdock api` as agent pods reach it: their runtimes check keys there and send
   * their traces to its ingest.
   */
  controlPlaneUrl?: string | undefined;
}

export function ownerReference(deployment: AgentDeployment) {
  return {
    apiVersion: API_VERSION,
    kind: AGENT_DEPLOYMENT.kind,
    name: deployment.metadata.name,
    uid: deployment.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

function meta(deployment: AgentDeployment, name: string) {
  return {
    name,
    namespace: deployment.metadata.namespace,
    labels: commonLabels(deployment.metadata.name, deployment.spec.workspace_id),
    ownerReferences: [ownerReference(deployment)],
  };
}

/** An HPA scales between min_scale and max_scale; equal (or unset) bounds pin the replicas. */
export function autoscaled(spec: ResourceSpec | null | undefined): boolean {
  const min = spec?.min_scale ?? 1;
  const max = spec?.max_scale ?? min;
  return min < max;
}

export function desiredReplicas(spec: ResourceSpec | null | undefined): number {
  return spec?.min_scale ?? 1;
}

/**
 * Server processes per pod: one per whole CPU the deployment requests, at least one. A Node
 * process uses about one core; the workers of a pod act as that many replicas (cli/workers.ts).
 */
export function runtimeWorkers(spec: ResourceSpec | null | undefined): number {
  return Math.max(1, Math.floor(spec?.cpu ?? 1));
}

/** A Secret the deployment owns (so it goes with it), labelled as its other children. */
export function ownedSecret(
  deployment: AgentDeployment,
  name: string,
  data: Record<string, string>,
): V1Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: meta(deployment, name),
    type: 'Opaque',
    // `data`, not `stringData`: server-side apply tracks `data` keys, so a secret dropped from
    // a newer revision is removed (a `stringData` key would linger).
    data: base64Values(data),
  };
}

export function envSecret(deployment: AgentDeployment, data: Record<string, string>): V1Secret {
  return ownedSecret(deployment, envSecretName(deployment.metadata.name), data);
}

export const base64Values = (data: Record<string, string>) =>
  Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));

const cpu = (v: number | null | undefined) => (v ? `${Math.round(v * 1000)}m` : undefined);
const memory = (v: number | null | undefined) => (v ? `${v}Mi` : undefined);

function compact(o: Record<string, string | undefined>): Record<string, string> | undefined {
  const entries = Object.entries(o).filter((e): e is [string, string] => e[1] !== undefined);
  return entries.length ? Object.fromEntries(entries) : undefined;
}

/** `env`: the deployment's environment (its secrets), as its env Secret holds it. */
export function workload(
  deployment: AgentDeployment,
  revision: AgentRevision,
  settings: WorkloadSettings,
  env: Record<string, string> = {},
): V1Deployment {
  const id = deployment.metadata.name;
  const spec = revision.spec.resource_spec ?? undefined;
  // Ready means serving: the readiness route also checks the database. Liveness does not, so
  // a database outage takes pods out of the Service without restarting them.
  const readiness = {
    httpGet: { path: '/ok?check_db=1', port: 'http' },
    periodSeconds: 2,
    timeoutSeconds: 5,
    failureThreshold: 3,
  };
  const liveness = {
    httpGet: { path: '/ok', port: 'http' },
    initialDelaySeconds: 30,
    periodSeconds: 15,
    timeoutSeconds: 5,
    failureThreshold: 6,
  };
  const labels = commonLabels(id, deployment.spec.workspace_id);
  const revisionAnnotations = {
    [REVISION_ANNOTATION]: revision.metadata.name,
    'graphdock.dev/revision-number': String(revision.spec.revision_number),
  };
  const requests = compact({ cpu: cpu(spec?.cpu), memory: memory(spec?.memory_mb) });
  const limits = compact({ cpu: cpu(spec?.cpu_limit), memory: memory(spec?.memory_limit_mb) });
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      ...meta(deployment, workloadName(id)),
      labels: { ...spec?.labels, ...labels },
      annotations: { ...spec?.annotations, ...revisionAnnotations },
    },
    spec: {
      // With an HPA the replica count is the HPA's to set, so this manager does not own it.
      ...(autoscaled(spec) ? {} : { replicas: desiredReplicas(spec) }),
      selector: { matchLabels: selectorLabels(id) },
      progressDeadlineSeconds: settings.progressDeadlineSeconds,
      revisionHistoryLimit: 10,
      // Old pods go only once new ones are Ready: a revision that never gets there leaves the
      // previous one serving.
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: '25%' } },
      template: {
        metadata: {
          labels: { ...spec?.labels, ...labels },
          annotations: { ...spec?.annotations, ...revisionAnnotations },
        },
        spec: {
          enableServiceLinks: false,
          terminationGracePeriodSeconds: terminationGraceSeconds(env),
          ...(spec?.service_account_name ? { serviceAccountName: spec.service_account_name } : {}),
          ...(spec?.image_pull_secrets?.length
            ? { imagePullSecrets: spec.image_pull_secrets }
            : {}),
          ...(spec?.volumes?.length ? { volumes: spec.volumes as never } : {}),
          ...(spec?.init_containers?.length
            ? { initContainers: spec.init_containers as never }
            : {}),
          containers: [
            {
              name: 'api-server',
              image: revision.spec.source_revision_config.image_uri,
              ports: [{ name: 'http', containerPort: SERVER_PORT }],
              // `env` wins over `envFrom`: a deployment's secrets cannot change these.
              env: [
                { name: 'PORT', value: String(SERVER_PORT) },
                // After SIGTERM the pod keeps serving while the Service drops it from its
                // endpoints, closing each connection after its answer (docs/operator.md).
                { name: 'GRAPHDOCK_SHUTDOWN_DRAIN_SECS', value: String(SHUTDOWN_DRAIN_SECONDS) },
                { name: 'GRAPHDOCK_WORKERS', value: String(runtimeWorkers(spec)) },
                ...authEnv(deployment, settings),
                ...tracesEnv(deployment, settings),
              ],
              envFrom: [{ secretRef: { name: envSecretName(id) } }],
              // A start that fails says why in its last log line; kubelet keeps that tail as the
              // termination message, which a crash loop's DEPLOY_FAILED message quotes.
              terminationMessagePolicy: 'FallbackToLogsOnError',
              readinessProbe: readiness,
              livenessProbe: liveness,
              ...(requests || limits ? { resources: { requests, limits } } : {}),
              ...(spec?.volume_mounts?.length ? { volumeMounts: spec.volume_mounts as never } : {}),
            },
            ...((spec?.sidecars ?? []) as never[]),
          ],
        },
      },
    },
  };
}

/**
 * The runtime checks presented keys with the control plane (key material never reaches the pod
 * spec or the env Secret). Required: a runtime with no way to check keys refuses to start rather
 * than serve openly; a deployment opts out with its secret GRAPHDOCK_AUTH_TYPE=noop.
 */
function authEnv(deployment: AgentDeployment, settings: WorkloadSettings) {
  return [
    { name: 'GRAPHDOCK_AUTH_REQUIRED', value: 'true' },
    ...(settings.controlPlaneUrl
      ? [
          { name: 'GRAPHDOCK_CONTROL_PLANE_URL', value: settings.controlPlaneUrl },
          { name: 'GRAPHDOCK_WORKSPACE_ID', value: deployment.spec.workspace_id },
        ]
      : []),
  ];
}

/**
 * Traces go to the control plane's ingest under the deployment's own key (read from its Secret,
 * so the key is not in the pod spec), into a project named after the deployment. A user's
 * LANGSMITH_* secrets still take precedence inside the runtime (docs/traces.md).
 */
function tracesEnv(deployment: AgentDeployment, settings: WorkloadSettings) {
  if (!settings.controlPlaneUrl) return [];
  return [
    {
      name: 'GRAPHDOCK_TRACES_ENDPOINT',
      value: `${settings.controlPlaneUrl.replace(/\/+$/, '')}/api/v1`,
    },
    {
      name: 'GRAPHDOCK_TRACES_API_KEY',
      valueFrom: {
        secretKeyRef: {
          name: traceKeySecretName(deployment.metadata.name),
          key: TRACE_KEY_FIELDS.key,
        },
      },
    },
    { name: 'GRAPHDOCK_DEPLOYMENT_NAME', value: deployment.spec.name },
  ];
}

export function service(deployment: AgentDeployment): V1Service {
  const id = deployment.metadata.name;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: meta(deployment, workloadName(id)),
    spec: {
      type: 'ClusterIP',
      selector: selectorLabels(id),
      ports: [{ name: 'http', port: SERVER_PORT, targetPort: 'http' }],
    },
  };
}

export function autoscaler(
  deployment: AgentDeployment,
  revision: AgentRevision,
): V2HorizontalPodAutoscaler {
  const id = deployment.metadata.name;
  const spec = revision.spec.resource_spec;
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: meta(deployment, workloadName(id)),
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: workloadName(id) },
      minReplicas: Math.max(1, spec?.min_scale ?? 1),
      maxReplicas: spec?.max_scale ?? 1,
      metrics: [
        {
          type: 'Resource',
          resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } },
        },
      ],
    },
  };
}

export function disruptionBudget(deployment: AgentDeployment): V1PodDisruptionBudget {
  const id = deployment.metadata.name;
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: meta(deployment, workloadName(id)),
    spec: {
      maxUnavailable: 1,
      selector: { matchLabels: selectorLabels(id) },
    },
  };
}

/** Headers of every kind the operator creates, for deletion. */
export function childRefs(deployment: AgentDeployment): KubernetesObject[] {
  const id = deployment.metadata.name;
  const namespace = deployment.metadata.namespace;
  const ref = (apiVersion: string, kind: string, name = workloadName(id)) => ({
    apiVersion,
    kind,
    metadata: { name, namespace },
  });
  return [
    ref('autoscaling/v2', 'HorizontalPodAutoscaler'),
    ref('policy/v1', 'PodDisruptionBudget'),
    ref('v1', 'Service'),
    ref('apps/v1', 'Deployment'),
    ref('v1', 'Secret', envSecretName(id)),
    ref('v1', 'Secret', databaseSecretName(id)),
    ref('v1', 'Secret', traceKeySecretName(id)),
  ];
}
