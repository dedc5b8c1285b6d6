// The quick start for real (issue 17, section 3): `helm install` runs the api and the operator as
// real pods of the Graphdock image next to a PostgreSQL pod; the image of examples/ is deployed
// with POST /v2/deployments and serves the official SDK once its revision is DEPLOYED; a PATCH to
// a changed graph rolls out while a client keeps making runs (none may fail); a runtime pod
// deleted mid-run loses no run; DELETE removes pods, Service, Secrets and the database. The
// first run's trace, sent by the pod to the api's ingest, reads back there (issue 21 end to end).
// Traffic reaches the cluster only through `kubectl port-forward` on 127.0.0.1.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseName } from '../../operator/index.js';
import {
  AGENTS_NAMESPACE,
  buildQuickStartImages,
  createDeployment,
  diagnostics,
  psql,
  rolloutUnderLoad,
  sdk,
  explain,
  seconds,
  startFront,
  startQuickStart,
  waitForRevision,
  type Deployment,
  type QuickStart,
  type QuickStartImages,
} from './quick-start.js';

const log = (line: string) => console.log(`quick-start-real: ${line}`);
let images: QuickStartImages;
let qs: QuickStart;

beforeAll(async () => {
  const t = Date.now();
  images = await buildQuickStartImages(log);
  log(`archives ready in ${seconds(t)}`);
  qs = await startQuickStart(images, log);
}, 900_000);

afterAll(async () => {
  await qs?.api.close();
  await qs?.cluster.stop();
}, 180_000);

type Messages = { messages: { content: string }[] };

interface PodList {
  items: {
    metadata: { name: string; deletionTimestamp?: string };
    status: { phase: string; conditions?: { type: string; status: string }[] };
  }[];
}

async function pods(deploymentId: string): Promise<PodList['items']> {
  const list = JSON.parse(
    await qs.cluster.kubectl([
      '-n',
      AGENTS_NAMESPACE,
      'get',
      'pods',
      '-l',
      `graphdock.dev/deployment-id=${deploymentId}`,
      '-o',
      'json',
    ]),
  ) as PodList;
  return list.items;
}

const isReady = (p: PodList['items'][number]) =>
  !p.metadata.deletionTimestamp &&
  (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

describe('the quick start on real pods', () => {
  let deployment: Deployment;
  let serviceIp: string;
  let threadId: string;

  it('POST /v2/deployments of the examples image → DEPLOYED → the SDK runs a thread and a stream', async () => {
    const t = Date.now();
    deployment = await createDeployment(qs, 'quick-start', images.examples.ref, {
      // A dead pod's runs are taken over soon; the slow graph's steps outlast a pod's deletion.
      GRAPHDOCK_RUN_LEASE_SECS: '5',
      GRAPHDOCK_SLOW_STEP_MS: '3000',
    });
    await waitForRevision(qs, deployment.id, deployment.latest_revision_id, 'DEPLOYED');
    log(`POST → DEPLOYED: ${seconds(t)}`);
    const read = await qs.api.json<Deployment>(`/v2/deployments/${deployment.id}`);
    expect(read).toMatchObject({ status: 'READY', active_revision_id: read.latest_revision_id });

    const service = `service/gd-${deployment.id}`;
    serviceIp = (
      await qs.cluster.kubectl([
        '-n',
        AGENTS_NAMESPACE,
        'get',
        service,
        '-o',
        'jsonpath={.spec.clusterIP}',
      ])
    ).trim();
    const forward = await qs.cluster.portForward(service, 8000, { namespace: AGENTS_NAMESPACE });
    try {
      const client = sdk(`http://127.0.0.1:${forward.port}`);
      const thread = await client.threads.create();
      threadId = thread.thread_id;
      const events: { event: string; data: unknown }[] = [];
      for await (const chunk of client.runs.stream(thread.thread_id, 'echo', {
        input: { messages: [{ role: 'user', content: 'hello pod' }] },
        streamMode: 'values',
      }))
        events.push(chunk);
      log(`POST → first streamed run done: ${seconds(t)}`);
      expect(events[0]?.event).toBe('metadata');
      const last = events.filter((e) => e.event === 'values').at(-1)?.data as Messages;
      expect(last.messages.map((m) => m.content)).toEqual(['hello pod', 'echo: hello pod']);
      const state = await client.threads.getState<Messages>(thread.thread_id);
      expect(state.values.messages.at(-1)?.content).toBe('echo: hello pod');
    } finally {
      await forward.close();
    }
  }, 300_000);

  it("the pod's run is read back from the api's trace store, its thread_id on the root and a child", async () => {
    // The operator gave the pod GRAPHDOCK_TRACES_ENDPOINT and a key: the official tracer sends
    // the run to the api's ingest, into a project named after the deployment (issue 21).
    const t = Date.now();
    type TraceRun = {
      id: string;
      parent_run_id: string | null;
      trace_id: string;
      extra: { metadata?: Record<string, unknown> } | null;
    };
    const read = async () => {
      const [project] = await qs.api.json<{ id: string }[]>('/api/v1/sessions?name=quick-start');
      if (!project) return [];
      const { runs } = await qs.api.json<{ runs: TraceRun[] }>('/api/v1/runs/query', {
        method: 'POST',
        body: { session: [project.id], thread_id: threadId, limit: 100 },
      });
      return runs;
    };
    const deadline = Date.now() + 60_000;
    let runs: TraceRun[] = [];
    while (Date.now() < deadline) {
      runs = await read();
      if (runs.some((r) => !r.parent_run_id) && runs.some((r) => r.parent_run_id)) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    log(`streamed run → its trace readable in the api: ${seconds(t)}`);
    const root = runs.find((r) => !r.parent_run_id);
    const child = runs.find((r) => r.parent_run_id === root?.id);
    expect(root, JSON.stringify(runs)).toBeDefined();
    expect(child, JSON.stringify(runs)).toBeDefined();
    for (const run of [root!, child!]) {
      expect(run.trace_id).toBe(root!.id);
      expect(run.extra?.metadata?.thread_id).toBe(threadId);
    }
  }, 120_000);

  it('PATCH to a changed graph rolls out while a client keeps running: no request fails', async () => {
    await startFront(qs, 'front', serviceIp, images.graphdock.ref);
    const forward = await qs.cluster.portForward('pod/front', 9000, {
      namespace: AGENTS_NAMESPACE,
    });
    try {
      const rollout = await rolloutUnderLoad(
        qs,
        deployment.id,
        `http://127.0.0.1:${forward.port}`,
        images.examplesV2.ref,
      );
      const { replies, failures } = rollout;
      log(
        `PATCH → DEPLOYED ${(rollout.deployedMs / 1000).toFixed(1)} s, → old pod gone ${(rollout.oldPodGoneMs / 1000).toFixed(1)} s; ${replies.length} runs (${replies.filter((r) => r.startsWith('echo v2:')).length} by the new graph), ${failures.length} failed`,
      );
      expect(failures).toEqual([]);
      expect(replies.some((r) => r.startsWith('echo: '))).toBe(true);
      // Once the old pod is gone, only the new graph answers.
      expect(replies.slice(-4).every((r) => r.startsWith('echo v2: '))).toBe(true);
    } finally {
      await forward.close();
    }
  }, 300_000);

  it('runs accepted by a runtime pod that is killed mid-run end success, once each', async () => {
    const openForward = () =>
      qs.cluster.portForward('pod/front', 9000, { namespace: AGENTS_NAMESPACE });
    let forward = await openForward();
    try {
      let client = sdk(`http://127.0.0.1:${forward.port}`);
      const runs: { threadId: string; runId: string; text: string }[] = [];
      for (let i = 0; i < 4; i++) {
        const thread = await client.threads.create();
        const text = `background ${i}`;
        const run = await client.runs.create(thread.thread_id, 'slow', {
          input: { messages: [{ role: 'user', content: text }] },
        });
        runs.push({ threadId: thread.thread_id, runId: run.run_id, text });
      }
      const deadline = Date.now() + 30_000;
      for (;;) {
        const statuses = await Promise.all(
          runs.map(async (r) => (await client.runs.get(r.threadId, r.runId)).status),
        );
        if (statuses.every((s) => s === 'running')) break;
        if (Date.now() > deadline) throw new Error(`runs did not start: ${statuses.join(', ')}`);
        await new Promise((r) => setTimeout(r, 250));
      }
      const [victim] = (await pods(deployment.id)).filter(isReady);
      expect(victim).toBeDefined();
      const t = Date.now();
      // Killed 2 s after SIGTERM, while each run has seconds to go: its replacement takes over.
      await qs.cluster.kubectl([
        '-n',
        AGENTS_NAMESPACE,
        'delete',
        'pod',
        victim!.metadata.name,
        '--grace-period=2',
        '--wait=false',
      ]);
      // With one replica the Service has no pod between the kill and the replacement's
      // readiness: reads may fail meanwhile (this test counts runs, not requests).
      // The relay then resets the connections it cannot pass on, and kubectl ends its forward
      // at the first such reset (not the product's doing), so a forward that ended is reopened.
      const retried = async <T>(read: () => Promise<T>): Promise<T> => {
        for (;;) {
          try {
            return await read();
          } catch (err) {
            if (Date.now() - t > 180_000)
              throw new Error(`${explain(err)}\n${await diagnostics(qs.cluster)}`);
            const ended = forward.ended();
            if (ended !== undefined) {
              log(`port-forward ended (${ended.split('\n').pop()}); reopened`);
              forward = await openForward();
              client = sdk(`http://127.0.0.1:${forward.port}`);
            }
            await new Promise((r) => setTimeout(r, 500));
          }
        }
      };
      for (const { threadId, runId, text } of runs) {
        for (;;) {
          const run = await retried(() => client.runs.get(threadId, runId));
          if (run.status === 'success') break;
          expect(['pending', 'running']).toContain(run.status);
          if (Date.now() - t > 180_000)
            throw new Error(`run ${runId} ${run.status}\n${await diagnostics(qs.cluster)}`);
          await new Promise((r) => setTimeout(r, 500));
        }
        const list = await retried(() => client.runs.list(threadId));
        expect(list.map((r) => [r.run_id, r.status])).toEqual([[runId, 'success']]);
        const state = await retried(() => client.threads.getState<Messages>(threadId));
        expect(state.values.messages.map((m) => m.content)).toEqual([
          text,
          `first: ${text}`,
          `second: first: ${text}`,
        ]);
      }
      log(`pod killed → every run success: ${seconds(t)}`);
      // How often each run was claimed (not in the API; psql in the database's pod): a run
      // the killed pod left behind twice, by the replacement, and never more.
      const attempts = (
        await psql(
          qs.cluster,
          `SELECT attempt FROM runs WHERE run_id IN (${runs.map((r) => `'${r.runId}'`).join(',')})`,
          databaseName(deployment.id),
        )
      )
        .trim()
        .split('\n')
        .map(Number);
      log(`attempts: ${attempts.join(' ')}`);
      expect(attempts).toHaveLength(runs.length);
      for (const count of attempts) expect([1, 2]).toContain(count);
      expect(attempts).toContain(2);
    } finally {
      await forward.close();
    }
  }, 300_000);

  it('DELETE removes the pods, the Service, the Secrets and the database', async () => {
    // The operator's database for it (docs/operator.md names it gd_<id's hex digits>).
    const database = databaseName(deployment.id);
    expect(
      (
        await psql(qs.cluster, `SELECT count(*) FROM pg_database WHERE datname = '${database}'`)
      ).trim(),
    ).toBe('1');
    const t = Date.now();
    await qs.api.json(`/v2/deployments/${deployment.id}`, { method: 'DELETE' });
    const name = `gd-${deployment.id}`;
    const deadline = Date.now() + 120_000;
    for (;;) {
      const left = await qs.cluster.kubectl([
        '-n',
        AGENTS_NAMESPACE,
        'get',
        'agentdeployments,deployments,services,secrets,pods',
        '-o',
        'name',
      ]);
      const databases = await psql(
        qs.cluster,
        `SELECT count(*) FROM pg_database WHERE datname = '${database}'`,
      );
      if (!left.includes(deployment.id) && !left.includes(name) && databases.trim() === '0') break;
      if (Date.now() > deadline)
        throw new Error(`left after DELETE:\n${left}\ndatabase ${database}: ${databases}`);
      await new Promise((r) => setTimeout(r, 500));
    }
    log(`DELETE → everything gone: ${seconds(t)}`);
    expect(await pods(deployment.id)).toEqual([]);
  }, 300_000);
});
