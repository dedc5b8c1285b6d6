// Pure parts of the operator: the work queue's guarantees, reading a rollout, and what an
// AgentDeployment becomes.
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { lastWords, revisionOutcome, rolloutState, WorkQueue } from '../../operator/index.js';
import { children, mergeConditions, sameStatus } from '../../operator/reconcile/index.js';
import type { AgentDeployment, AgentRevision } from '../../operator/reconcile/index.js';

describe('WorkQueue', () => {
  it('deduplicates a key queued twice', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.add('a');
    q.add('b');
    expect(q.depth).toBe(2);
    expect(await q.get()).toBe('a');
    expect(await q.get()).toBe('b');
  });

  it('never hands out a key being processed; a re-add runs once after done()', async () => {
    const q = new WorkQueue();
    q.add('a');
    const first = await q.get();
    q.add('a');
    q.add('a');
    expect(q.depth).toBe(0); // held back while in flight
    q.done(first!);
    expect(q.depth).toBe(1);
    expect(await q.get()).toBe('a');
  });

  it('requeues failures with exponential backoff, reset by forget()', async () => {
    const q = new WorkQueue({ baseDelayMs: 20, maxDelayMs: 1_000 });
    const started = Date.now();
    q.addRateLimited('a'); // 20 ms
    expect(await q.get()).toBe('a');
    q.done('a');
    q.addRateLimited('a'); // 40 ms
    expect(await q.get()).toBe('a');
    q.done('a');
    q.addRateLimited('a'); // 80 ms
    expect(await q.get()).toBe('a');
    expect(Date.now() - started).toBeGreaterThanOrEqual(130);
    q.done('a');
    q.forget('a');
    const t = Date.now();
    q.addRateLimited('a'); // back to 20 ms
    expect(await q.get()).toBe('a');
    expect(Date.now() - t).toBeLessThan(500);
  });

  it('addAfter keeps the earlier time; shutDown releases waiting workers', async () => {
    const q = new WorkQueue();
    q.addAfter('a', 10);
    q.addAfter('a', 10_000);
    expect(await q.get()).toBe('a');
    const waiting = q.get();
    q.shutDown();
    expect(await waiting).toBeUndefined();
  });
});

const deployment = (over: Partial<V1Deployment['status']> = {}, revision = 'r1'): V1Deployment => ({
  metadata: { generation: 2 },
  spec: {
    replicas: 2,
    progressDeadlineSeconds: 5,
    selector: {},
    template: { metadata: { annotations: { 'graphdock.dev/revision-id': revision } } },
  },
  status: { observedGeneration: 2, replicas: 2, updatedReplicas: 2, availableReplicas: 2, ...over },
});

describe('rolloutState', () => {
  it('is complete only when the revision is observed, updated and available', () => {
    expect(rolloutState(deployment(), 'r1').phase).toBe('complete');
    expect(rolloutState(deployment({ observedGeneration: 1 }), 'r1').phase).toBe('progressing');
    expect(rolloutState(deployment({ updatedReplicas: 1 }), 'r1').phase).toBe('progressing');
    expect(rolloutState(deployment({ replicas: 3 }), 'r1').phase).toBe('progressing');
    expect(rolloutState(deployment({ availableReplicas: 1 }), 'r1').phase).toBe('progressing');
    expect(rolloutState(deployment({}, 'r0'), 'r1').phase).toBe('pending');
    expect(rolloutState(undefined, 'r1').phase).toBe('pending');
  });

  it('fails when the progress deadline is exceeded', () => {
    const state = rolloutState(
      deployment({
        availableReplicas: 0,
        conditions: [
          {
            type: 'Progressing',
            status: 'False',
            reason: 'ProgressDeadlineExceeded',
            message: 'ReplicaSet "x" has timed out progressing.',
          },
        ],
      }),
      'r1',
    );
    expect(state).toEqual({
      phase: 'failed',
      reason: 'ProgressDeadlineExceeded',
      message: expect.stringContaining('progress deadline (5 s)') as string,
    });
  });

  const pod = (revision: string, status: V1Pod['status']): V1Pod => ({
    metadata: { name: 'p1', annotations: { 'graphdock.dev/revision-id': revision } },
    status,
  });
  const waiting = (reason: string, restartCount = 0, message = 'detail') => ({
    containerStatuses: [
      {
        name: 'api-server',
        image: 'img:2',
        imageID: '',
        ready: false,
        restartCount,
        state: { waiting: { reason, message } },
        lastState: { terminated: { exitCode: 1, reason: 'Error' } },
      },
    ],
  });

  it("fails at once on the new revision's image pull back-off, before any deadline", () => {
    const rolling = deployment({ updatedReplicas: 1, availableReplicas: 1 });
    const state = rolloutState(rolling, 'r1', [pod('r1', waiting('ImagePullBackOff'))]);
    expect(state).toMatchObject({ phase: 'failed', reason: 'ImagePullBackOff' });
    expect((state as { message: string }).message).toContain('img:2');
    // As seen on a real node: the new pod counts as updated, the old one is the available one.
    const surge = deployment({ replicas: 2, updatedReplicas: 1, availableReplicas: 1 });
    const withOne = { ...surge, spec: { ...surge.spec!, replicas: 1 } };
    expect(rolloutState(withOne, 'r1', [pod('r1', waiting('ImagePullBackOff'))])).toMatchObject({
      phase: 'failed',
      reason: 'ImagePullBackOff',
    });
    // An old revision's pods, or a first pull still being tried, are not failures.
    expect(rolloutState(rolling, 'r1', [pod('r0', waiting('ImagePullBackOff'))]).phase).toBe(
      'progressing',
    );
    expect(rolloutState(rolling, 'r1', [pod('r1', waiting('ErrImagePull'))]).phase).toBe(
      'progressing',
    );
  });

  it('fails on a crash loop once the container was restarted', () => {
    const rolling = deployment({ updatedReplicas: 1, availableReplicas: 1 });
    expect(rolloutState(rolling, 'r1', [pod('r1', waiting('CrashLoopBackOff', 0))]).phase).toBe(
      'progressing',
    );
    const state = rolloutState(rolling, 'r1', [pod('r1', waiting('CrashLoopBackOff', 1))]);
    expect(state).toMatchObject({ phase: 'failed', reason: 'CrashLoopBackOff' });
    expect((state as { message: string }).message).toContain('last exit code 1');
    // A complete rollout is not undone by a pod's later trouble.
    expect(
      rolloutState(deployment(), 'r1', [pod('r1', waiting('CrashLoopBackOff', 5))]).phase,
    ).toBe('complete');
  });

  it("quotes a crash-looping container's last words: its `graphdock:` line, else its last", () => {
    const rolling = deployment({ updatedReplicas: 1, availableReplicas: 1 });
    const status = waiting('CrashLoopBackOff', 1);
    status.containerStatuses[0]!.lastState.terminated = {
      exitCode: 1,
      reason: 'Error',
      message:
        '{"level":40,"msg":"waiting for PostgreSQL"}\n' +
        'graphdock: invalid environment:\n  GRAPHDOCK_RUN_LEASE_SECS: expected number\n',
    } as never;
    const state = rolloutState(rolling, 'r1', [pod('r1', status)]);
    expect((state as { message: string }).message).toBe(
      'CrashLoopBackOff (pod p1, container api-server): restarted 1 times; last exit code 1 ' +
        '(Error): graphdock: invalid environment: GRAPHDOCK_RUN_LEASE_SECS: expected number',
    );
    expect(lastWords('starting\nSegmentation fault\n')).toBe('Segmentation fault');
    expect(lastWords('\n\n')).toBeUndefined();
    expect(lastWords(`graphdock: ${'x'.repeat(2000)}`)).toHaveLength(500);
  });

  it('DEPLOY_FAILED stays (with its reason) while a crash-looping pod is briefly up', () => {
    const progressing = { phase: 'progressing' as const, message: '1 of 2' };
    const failed = {
      message: 'CrashLoopBackOff (pod p1): restarted 2 times',
      conditions: [{ type: 'Ready', reason: 'CrashLoopBackOff' }],
    };
    expect(revisionOutcome(progressing, 'DEPLOY_FAILED', failed)).toEqual({
      status: 'DEPLOY_FAILED',
      message: failed.message,
      reason: 'CrashLoopBackOff',
    });
    expect(revisionOutcome({ phase: 'complete', message: 'ok' }, 'DEPLOY_FAILED').status).toBe(
      'DEPLOYED',
    );
  });

  it('a DEPLOYED revision stays DEPLOYED when replicas later become unavailable', () => {
    const progressing = { phase: 'progressing' as const, message: '1 of 2' };
    expect(revisionOutcome(progressing, 'DEPLOYED').status).toBe('DEPLOYED');
    expect(revisionOutcome(progressing, 'AWAITING_DEPLOY').status).toBe('DEPLOYING');
  });
});

const agentDeployment: AgentDeployment = {
  apiVersion: 'graphdock.dev/v1alpha1',
  kind: 'AgentDeployment',
  metadata: { name: '0a1b2c3d-0000-4000-8000-000000000000', namespace: 'agents', uid: 'u1' },
  spec: {
    workspace_id: '11111111-1111-4111-8111-111111111111',
    name: 'x',
    source: 'external_docker',
    source_config: {
      listener_id: '22222222-2222-4222-8222-222222222222',
      listener_config: { k8s_namespace: 'agents' },
    },
    source_revision_config: { image_uri: 'img:1' },
    secret_names: [],
    latest_revision: { id: '33333333-3333-4333-8333-333333333333', number: 1 },
  },
};
const revision = (resource_spec: AgentRevision['spec']['resource_spec']): AgentRevision => ({
  apiVersion: 'graphdock.dev/v1alpha1',
  kind: 'AgentRevision',
  metadata: { name: '33333333-3333-4333-8333-333333333333', namespace: 'agents', uid: 'u2' },
  spec: {
    workspace_id: '11111111-1111-4111-8111-111111111111',
    deployment_id: agentDeployment.metadata.name,
    deployment_name: 'x',
    revision_number: 1,
    source: 'external_docker',
    source_revision_config: { image_uri: 'img:1' },
    resource_spec,
    secrets_ref: { name: 's', keys: [] },
  },
});

describe('children', () => {
  it('pins replicas without autoscaling and leaves them to the HPA with it', () => {
    const pinned = children.workload(agentDeployment, revision({ min_scale: 3, max_scale: 3 }), {
      progressDeadlineSeconds: 60,
    });
    expect(pinned.spec?.replicas).toBe(3);
    expect(children.autoscaled({ min_scale: 3, max_scale: 3 })).toBe(false);
    const scaled = children.workload(agentDeployment, revision({ min_scale: 1, max_scale: 4 }), {
      progressDeadlineSeconds: 60,
    });
    expect(scaled.spec).not.toHaveProperty('replicas');
    expect(
      children.autoscaler(agentDeployment, revision({ min_scale: 1, max_scale: 4 })).spec,
    ).toMatchObject({ minReplicas: 1, maxReplicas: 4 });
  });

  it("lets pods stop within the runtime's shutdown grace, drain and hand-back included", () => {
    const grace = (env?: Record<string, string>) =>
      children.workload(agentDeployment, revision({}), { progressDeadlineSeconds: 60 }, env).spec
        ?.template.spec?.terminationGracePeriodSeconds;
    // 5 s of drain, the runtime's 180 s default for its runs, 20 s to hand back and close.
    expect(grace()).toBe(205);
    expect(grace({ BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS: '60' })).toBe(85);
    expect(grace({ BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS: '0' })).toBe(25);
    expect(grace({ BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS: '7.5' })).toBe(33);
    // A value the runtime refuses to start with changes nothing here.
    expect(grace({ BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS: 'soon' })).toBe(205);
    expect(grace({ BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS: '-1' })).toBe(205);
  });

  it('runs one server process per whole requested CPU, at least one', () => {
    const workers = (resource_spec: AgentRevision['spec']['resource_spec']) =>
      children
        .workload(agentDeployment, revision(resource_spec), { progressDeadlineSeconds: 60 })
        .spec?.template.spec?.containers[0]?.env?.find((e) => e.name === 'GRAPHDOCK_WORKERS')
        ?.value;
    expect(workers({ cpu: 4 })).toBe('4');
    expect(workers({ cpu: 2.5 })).toBe('2');
    expect(workers({ cpu: 0.5 })).toBe('1');
    expect(workers({})).toBe('1');
    expect(workers(null)).toBe('1');
  });

  it('carries resources, labels, annotations, service account, pull secrets and volumes', () => {
    const w = children.workload(
      agentDeployment,
      revision({
        cpu: 0.5,
        cpu_limit: 1,
        memory_mb: 512,
        labels: { team: 'a' },
        annotations: { note: 'n' },
        service_account_name: 'agent-sa',
        image_pull_secrets: [{ name: 'regcred' }],
        volumes: [{ name: 'data', emptyDir: {} }],
        volume_mounts: [{ name: 'data', mountPath: '/data' }],
      }),
      { progressDeadlineSeconds: 60 },
    );
    const pod = w.spec!.template;
    const container = pod.spec!.containers[0]!;
    expect(container.resources).toEqual({
      requests: { cpu: '500m', memory: '512Mi' },
      limits: { cpu: '1000m' },
    });
    expect(pod.metadata?.labels).toMatchObject({ team: 'a' });
    expect(pod.metadata?.annotations).toMatchObject({ note: 'n' });
    expect(pod.spec?.serviceAccountName).toBe('agent-sa');
    expect(pod.spec?.imagePullSecrets).toEqual([{ name: 'regcred' }]);
    expect(pod.spec?.volumes).toEqual([{ name: 'data', emptyDir: {} }]);
    expect(container.volumeMounts).toEqual([{ name: 'data', mountPath: '/data' }]);
    // Ready means serving: the readiness route checks the database; liveness does not.
    expect(container.readinessProbe?.httpGet?.path).toBe('/ok?check_db=1');
    expect(container.livenessProbe?.httpGet?.path).toBe('/ok');
    expect(w.spec?.strategy?.rollingUpdate?.maxUnavailable).toBe(0);
    // Key checks go to the control plane; without one the runtime must refuse to start.
    expect(container.env).toEqual([
      { name: 'PORT', value: '8000' },
      { name: 'GRAPHDOCK_SHUTDOWN_DRAIN_SECS', value: '5' },
      { name: 'GRAPHDOCK_WORKERS', value: '1' },
      { name: 'GRAPHDOCK_AUTH_REQUIRED', value: 'true' },
    ]);
    const wired = children.workload(agentDeployment, revision({}), {
      progressDeadlineSeconds: 60,
      controlPlaneUrl: 'http://api.graphdock:8080',
    });
    expect(wired.spec!.template.spec!.containers[0]!.env).toEqual([
      { name: 'PORT', value: '8000' },
      { name: 'GRAPHDOCK_SHUTDOWN_DRAIN_SECS', value: '5' },
      { name: 'GRAPHDOCK_WORKERS', value: '1' },
      { name: 'GRAPHDOCK_AUTH_REQUIRED', value: 'true' },
      { name: 'GRAPHDOCK_CONTROL_PLANE_URL', value: 'http://api.graphdock:8080' },
      { name: 'GRAPHDOCK_WORKSPACE_ID', value: agentDeployment.spec.workspace_id },
      // Traces go to the control plane's ingest, with the deployment's key from its Secret.
      { name: 'GRAPHDOCK_TRACES_ENDPOINT', value: 'http://api.graphdock:8080/api/v1' },
      {
        name: 'GRAPHDOCK_TRACES_API_KEY',
        valueFrom: {
          secretKeyRef: { name: `gd-${agentDeployment.metadata.name}-traces`, key: 'key' },
        },
      },
      { name: 'GRAPHDOCK_DEPLOYMENT_NAME', value: agentDeployment.spec.name },
    ]);
    expect(w.metadata?.name).toBe(`gd-${agentDeployment.metadata.name}`);
  });
});

describe('conditions', () => {
  it('moves lastTransitionTime only when the status flips', () => {
    const first = mergeConditions(
      undefined,
      [{ type: 'Ready', status: 'False', reason: 'A', message: '' }],
      1,
      't1',
    );
    const same = mergeConditions(
      first,
      [{ type: 'Ready', status: 'False', reason: 'B', message: '' }],
      1,
      't2',
    );
    const flipped = mergeConditions(
      same,
      [{ type: 'Ready', status: 'True', reason: 'C', message: '' }],
      1,
      't3',
    );
    expect([first[0]!.lastTransitionTime, same[0]!.lastTransitionTime]).toEqual(['t1', 't1']);
    expect(flipped[0]!.lastTransitionTime).toBe('t3');
    expect(
      sameStatus({ a: 1, b: [first[0]] }, { b: [{ ...first[0], lastTransitionTime: 'x' }], a: 1 }),
    ).toBe(true);
  });
});
