// The Helm chart's values as a zod schema: the one source of charts/graphdock/values.schema.json
// (generated) and of the unit test that checks values.yaml against it.
import { z } from 'zod';
import { ORGANIZATION_PLANS } from '../../common/config/index.js';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const namespaceName = z
  .string()
  .max(63)
  .regex(DNS_LABEL, 'a namespace name: lower-case letters, digits and "-", 63 characters at most');

const stringMap = z.record(z.string(), z.string());
/** Objects Kubernetes itself validates (affinity, tolerations, env entries): passed through. */
const kubernetesObject = z.record(z.string(), z.unknown());
const quantity = z.union([z.string(), z.number()]);

const Resources = z.strictObject({
  requests: z.record(z.string(), quantity).optional(),
  limits: z.record(z.string(), quantity).optional(),
});

const ServiceAccount = z.strictObject({
  create: z.boolean().describe('Create the service account (otherwise `name` must exist)'),
  name: z.string().describe('Defaults to <fullname>-<component>'),
  annotations: stringMap,
});

/** Settings every component's pods share. */
const podSettings = {
  replicas: z.int().min(0),
  port: z.int().min(1).max(65535),
  resources: Resources,
  nodeSelector: stringMap,
  tolerations: z.array(kubernetesObject),
  affinity: kubernetesObject,
  podAnnotations: stringMap,
  podLabels: stringMap,
  extraEnv: z
    .array(kubernetesObject)
    .describe('Extra container env entries (name/value/valueFrom)'),
  extraArgs: z.array(z.string()),
  serviceAccount: ServiceAccount,
};

const SecretKeyRef = z.strictObject({
  name: z.string().describe('An existing Secret; empty: none'),
  key: z.string().min(1),
});

export const ChartValues = z.strictObject({
  nameOverride: z.string(),
  fullnameOverride: z.string(),
  image: z.strictObject({
    repository: z.string().min(1),
    tag: z.string().describe("Defaults to the chart's appVersion"),
    pullPolicy: z.enum(['Always', 'IfNotPresent', 'Never']),
  }),
  imagePullSecrets: z.array(z.strictObject({ name: z.string().min(1) })),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace']),
  watchNamespaces: z
    .array(namespaceName)
    .describe('Empty: cluster-wide ClusterRoles. Otherwise: namespaced Roles in these namespaces'),
  podSecurityContext: kubernetesObject,
  securityContext: kubernetesObject,
  database: z.strictObject({
    url: z.string().describe("PostgreSQL URL of the api's database (stored in a Secret)"),
    existingSecret: SecretKeyRef.describe('Or: a Secret holding the URL'),
  }),
  bootstrap: z.strictObject({
    // A union, not a refine, so the rule reaches values.schema.json.
    apiKey: z
      .union([z.literal(''), z.string().min(16)])
      .describe('The first API key; empty: generated once and kept across upgrades'),
    existingSecret: z
      .string()
      .describe('Or: a Secret with the GRAPHDOCK_BOOTSTRAP_* keys (then nothing is generated)'),
    organizationName: z.string().min(1),
    organizationPlan: z.enum(ORGANIZATION_PLANS),
    workspaceId: z.union([z.literal(''), z.uuid()]).describe('Empty: a random id'),
    workspaceName: z.string().min(1),
  }),
  bulkExport: z.strictObject({
    encryptionKeys: z
      .string()
      .describe(
        'Keys sealing destination credentials: id:base64 (32 bytes), comma-separated, newest first; empty: one generated once and kept across upgrades',
      ),
    existingSecret: SecretKeyRef.describe('Or: a Secret holding that key list'),
    defaultCredentials: z
      .boolean()
      .describe("Destinations may omit credentials: the AWS SDK's default chain (e.g. IRSA)"),
    executor: z
      .enum(['api', 'jobs'])
      .describe('Who executes export runs: the api process, or Kubernetes Jobs the operator runs'),
    jobs: z.strictObject({
      concurrency: z.int().min(1).max(100).describe('Jobs of one export running at once'),
    }),
  }),
  api: z.strictObject({
    enabled: z.boolean(),
    ...podSettings,
    service: z.strictObject({
      type: z.enum(['ClusterIP', 'NodePort', 'LoadBalancer']),
      port: z.int().min(1).max(65535),
    }),
    tracesPublicUrl: z
      .union([z.literal(''), z.string().regex(/^https?:\/\/\S+$/)])
      .describe(
        'Where users reach the trace store (`https://<host>/api/v1`): GRAPHDOCK_TRACES_PUBLIC_URL',
      ),
  }),
  operator: z.strictObject({
    enabled: z.boolean(),
    ...podSettings,
    computeId: z
      .string()
      .min(1)
      .describe("The listener's compute_id this operator serves (`--compute-id`)"),
    workers: z.int().min(1),
    leaderElection: z.strictObject({
      leaseDurationSeconds: z.int().min(1),
      renewDeadlineSeconds: z.int().min(1),
      retryPeriodSeconds: z.int().min(1),
    }),
    progressDeadlineSeconds: z.int().min(1),
    controlPlaneUrl: z.union([z.literal(''), z.url()]),
    database: z
      .strictObject({
        adminUrl: z
          .string()
          .describe('Admin URL (CREATEDB, CREATEROLE) of the server for per-deployment databases'),
        existingSecret: SecretKeyRef.describe('Or: a Secret holding that URL'),
        host: z.string().describe('host:port agent pods use to reach that server, if different'),
        retainPolicy: z.enum(['Delete', 'Retain']),
      })
      .describe('Unset URL: only deployments with a POSTGRES_URI_CUSTOM secret run'),
  }),
  serviceMonitor: z.strictObject({
    enabled: z
      .boolean()
      .describe("Render a Prometheus Operator ServiceMonitor for the operator's /metrics"),
    interval: z.string(),
    scrapeTimeout: z.string(),
    labels: stringMap,
  }),
});

export type ChartValues = z.infer<typeof ChartValues>;

/** values.schema.json: JSON Schema draft-07, which every Helm 3 release understands. */
export function renderValuesSchema(): string {
  const schema = z.toJSONSchema(ChartValues, { target: 'draft-7', io: 'input' });
  return `${JSON.stringify({ title: 'graphdock chart values', ...schema }, null, 2)}\n`;
}
