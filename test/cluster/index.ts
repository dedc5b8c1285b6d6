// The one entry point tests and benchmarks use to get a real, local Kubernetes control plane:
// etcd + kube-apiserver (TLS, RBAC) + kube-controller-manager + kube-scheduler + kwok (fake,
// always-Ready nodes whose pods become Running/Ready with no container runtime), and on request
// one real node (kubelet + containerd + runc + CNI + kube-proxy; see node.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPki, issueClientCert, writeKubeconfig } from './certs.js';
import { apiserverArgs, nodeManifests, SERVICE_CIDR, SERVICE_IP } from './components.js';
import { cleanupNode, planRealNode, startRealNode, type NodePlan, type RealNode } from './node.js';
import { ClusterProcess } from './process.js';
import {
  distinctFreePorts,
  readyz,
  runTool,
  startWatchdog,
  waitFor,
  type CommandOptions,
} from './support.js';
import { ensureNodeTools, ensureTools } from './tools.js';

export { ensureNodeTools, ensureTools } from './tools.js';
export { BUSYBOX_IMAGE, POD_CIDR, REAL_NODE_LABEL } from './node.js';
export type { CommandOptions } from './support.js';

export interface ClusterOptions {
  /** Fake nodes kwok keeps Ready (default 3). */
  nodes?: number;
  /** Folder holding the binaries; default: ensureTools() (builds once, then cached). */
  binDir?: string;
  /**
   * Also start one real node (label graphdock.test/node=real) whose pods run as containers:
   * needs root, and the tools of build-node-tools.sh (default: ensureNodeTools()).
   */
  realNode?: boolean;
  nodeBinDir?: string;
}

export interface Cluster {
  /** Admin (system:masters) kubeconfig with inlined credentials. */
  kubeconfigPath: string;
  /** https://127.0.0.1:<port> */
  server: string;
  binDir: string;
  /** Runs kubectl against this cluster; resolves to stdout, rejects with stderr on failure. */
  kubectl(args: string[], options?: CommandOptions): Promise<string>;
  /** Runs helm against this cluster (its own throw-away helm home). */
  helm(args: string[], options?: CommandOptions): Promise<string>;
  /** A kubeconfig for a non-admin user (client cert with CN=user, O=groups), for RBAC tests. */
  userKubeconfig(user: string, groups?: string[]): Promise<string>;
  /**
   * Stops kube-apiserver (SIGTERM, SIGKILL after 3 s; at once with `crash`), keeps it down for
   * `downMs`, then starts it again on the same port with the same etcd data and waits for /readyz.
   */
  restartApiserver(options?: { downMs?: number; crash?: boolean }): Promise<void>;
  /** Names of the fake nodes. */
  nodeNames: string[];
  /** The real node, when started: its name, its folder of tools (images/*.oci.tar) and more. */
  realNode?: { name: string; nodeIp: string; netns: string; cgroup: string; nodeBinDir: string };
  /**
   * Imports an image archive (OCI image layout in a tar, or `docker save` format) into the real
   * node's containerd, for pods with imagePullPolicy Never/IfNotPresent; resolves to the image
   * names it held. Rejects when the cluster has no real node.
   */
  loadImage(archivePath: string): Promise<string[]>;
  /**
   * Lets the real node's pods reach a server of the test on 127.0.0.1:`port`: a relay listening
   * on the host end of the node's link only; resolves with the address pods use.
   */
  exposeToPods(port: number): Promise<{ host: string; port: number; close(): Promise<void> }>;
  /**
   * `kubectl port-forward --address 127.0.0.1 <target> :<remotePort>` (target: pod/x, svc/y, ...):
   * resolves once it listens, with the local port; close() ends it (stop() ends any left open).
   */
  portForward(
    target: string,
    remotePort: number,
    options?: { namespace?: string },
  ): Promise<PortForward>;
  /** Throw-away folder with certificates, etcd data and logs/<component>.log; removed by stop(). */
  workDir: string;
  /** Process ids of the running components (etcd, apiserver, controllers, kwok). */
  pids(): number[];
  stop(): Promise<void>;
}

/**
 * Ports are picked free and bound later by other processes, so on a busy machine another program
 * can take one in between; such a start is thrown away whole and tried again on fresh ports.
 */
export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startClusterOnce(options);
    } catch (error) {
      const portTaken = /address already in use|EADDRINUSE/i.test(String(error));
      if (!portTaken || attempt >= 3) throw error;
    }
  }
}

async function startClusterOnce(options: ClusterOptions): Promise<Cluster> {
  const binDir = options.binDir ?? (await ensureTools());
  const nodeBinDir = options.realNode
    ? (options.nodeBinDir ?? (await ensureNodeTools()))
    : undefined;
  const dir = mkdtempSync(join(tmpdir(), 'graphdock-cluster-'));
  const logDir = join(dir, 'logs');
  const processes: ClusterProcess[] = [];
  const watchdog = startWatchdog(dir);
  const plan: NodePlan | undefined = options.realNode ? planRealNode(dir) : undefined;
  let realNode: RealNode | undefined;
  const forwards = new Set<ChildProcess>();
  const killAll = (): void => {
    forwards.forEach((f) => f.kill('SIGKILL'));
    processes.forEach((p) => p.killNow());
  };
  process.once('exit', killAll);

  let stopping: Promise<void> | undefined;
  const stopAll = (): Promise<void> => (stopping ??= stopEverything());
  const stopEverything = async (): Promise<void> => {
    process.off('exit', killAll);
    forwards.forEach((f) => f.kill('SIGKILL'));
    // The node first, while the apiserver still answers it; then the control plane in reverse
    // start order: controllers first, etcd last, so none of them logs a storm of errors.
    if (realNode) await realNode.stop();
    else if (plan) await cleanupNode(plan);
    for (const child of [...processes].reverse()) await child.stop();
    watchdog.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    mkdirSync(logDir);
    const [etcdPort, etcdPeerPort, apiPort, kwokPort] = (await distinctFreePorts(4)) as [
      number,
      number,
      number,
      number,
    ];
    const server = `https://127.0.0.1:${apiPort}`;
    mkdirSync(join(dir, 'pki'));
    const pki = await createPki(join(dir, 'pki'), SERVICE_IP, plan ? [plan.hostIp] : []).catch(
      (error: unknown) => {
        throw new Error(`certificate generation failed (is openssl installed?): ${String(error)}`);
      },
    );
    const admin = await issueClientCert(pki, 'graphdock-admin', ['system:masters']);
    const kubeletClient = plan
      ? await issueClientCert(pki, 'kube-apiserver-kubelet-client', ['system:masters'])
      : undefined;
    const kubeconfigPath = join(dir, 'admin.kubeconfig');
    await writeKubeconfig(kubeconfigPath, server, pki, 'graphdock-admin', admin);

    const track = (p: ClusterProcess): ClusterProcess => {
      processes.push(p);
      p.start();
      writeFileSync(join(dir, 'pids'), processes.map((x) => x.pid ?? '').join(' '));
      return p;
    };
    const bin = (name: string): string => join(binDir, name);
    const etcdUrl = `http://127.0.0.1:${etcdPort}`;

    const etcd = track(
      new ClusterProcess({
        name: 'etcd',
        command: bin('etcd'),
        logDir,
        args: [
          '--name=graphdock-test',
          `--data-dir=${join(dir, 'etcd')}`,
          `--listen-client-urls=${etcdUrl}`,
          `--advertise-client-urls=${etcdUrl}`,
          `--listen-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
          `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
          `--initial-cluster=graphdock-test=http://127.0.0.1:${etcdPeerPort}`,
          '--unsafe-no-fsync', // test data is thrown away; fsync only slows a shared disk
          '--log-level=warn',
        ],
      }),
    );
    await waitFor('etcd /health', [etcd], async () => {
      const res = await fetch(`${etcdUrl}/health`);
      return res.ok && ((await res.json()) as { health?: string }).health === 'true';
    });

    const apiserver = track(
      new ClusterProcess({
        name: 'kube-apiserver',
        command: bin('kube-apiserver'),
        logDir,
        args: apiserverArgs({
          dir,
          pki,
          etcdUrl,
          apiPort,
          realNode: plan && kubeletClient ? { hostIp: plan.hostIp, kubeletClient } : undefined,
        }),
      }),
    );
    const apiserverReady = (): Promise<void> =>
      waitFor('kube-apiserver /readyz', [etcd, apiserver], () => readyz(apiPort, pki, admin));
    await apiserverReady();

    const controllerKubeconfigArgs = [
      `--kubeconfig=${kubeconfigPath}`,
      `--authentication-kubeconfig=${kubeconfigPath}`,
      `--authorization-kubeconfig=${kubeconfigPath}`,
      '--leader-elect=false',
      '--secure-port=0', // no metrics/health server needed, and no port to allocate
      // Default client limits (20 qps) would throttle benchmarks that create hundreds of objects.
      '--kube-api-qps=200',
      '--kube-api-burst=400',
    ];
    const controllerManager = track(
      new ClusterProcess({
        name: 'kube-controller-manager',
        command: bin('kube-controller-manager'),
        logDir,
        args: [
          ...controllerKubeconfigArgs,
          `--service-account-private-key-file=${pki.serviceAccountKey}`,
          `--root-ca-file=${pki.caCert}`,
          `--cluster-signing-cert-file=${pki.caCert}`,
          `--cluster-signing-key-file=${pki.caKey}`,
          `--service-cluster-ip-range=${SERVICE_CIDR}`,
          '--use-service-account-credentials=false',
          '--concurrent-deployment-syncs=10',
          '--concurrent-replicaset-syncs=10',
          '--v=1',
        ],
      }),
    );
    const scheduler = track(
      new ClusterProcess({
        name: 'kube-scheduler',
        command: bin('kube-scheduler'),
        logDir,
        args: [...controllerKubeconfigArgs, '--v=1'],
      }),
    );
    const kwok = track(
      new ClusterProcess({
        name: 'kwok',
        command: bin('kwok'),
        logDir,
        args: [
          `--kubeconfig=${kubeconfigPath}`,
          `--config=${join(binDir, 'kwok-stages.yaml')}`,
          '--manage-all-nodes=false',
          '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
          `--server-address=127.0.0.1:${kwokPort}`,
          '--cidr=10.244.0.0/16',
          '--node-ip=127.0.0.1',
          '--node-lease-duration-seconds=40',
        ],
      }),
    );
    const all = [etcd, apiserver, controllerManager, scheduler, kwok];

    const helmHome = join(dir, 'helm');
    const env = { KUBECONFIG: kubeconfigPath, HOME: helmHome };
    const kubectl = (args: string[], opts?: CommandOptions): Promise<string> =>
      runTool(bin('kubectl'), ['--kubeconfig', kubeconfigPath, ...args], env, opts);
    const helm = (args: string[], opts?: CommandOptions): Promise<string> =>
      runTool(
        bin('helm'),
        ['--kubeconfig', kubeconfigPath, ...args],
        {
          ...env,
          HELM_CACHE_HOME: join(helmHome, 'cache'),
          HELM_CONFIG_HOME: join(helmHome, 'config'),
          HELM_DATA_HOME: join(helmHome, 'data'),
        },
        opts,
      );

    const nodeNames = Array.from({ length: options.nodes ?? 3 }, (_, i) => `kwok-node-${i}`);
    // nodes: 0 (only a real node) has nothing to apply, and kubectl refuses an empty list.
    if (nodeNames.length > 0) {
      await kubectl(['apply', '-f', '-'], { input: nodeManifests(nodeNames) });
    }
    await waitFor('fake nodes Ready', all, async () => {
      const out = await kubectl([
        'get',
        'nodes',
        '-o',
        'jsonpath={range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\\n"}{end}',
      ]);
      const ready = out.split('\n').filter((s) => s === 'True').length;
      return ready === nodeNames.length;
    });
    // Pods need the namespace's default ServiceAccount (ServiceAccount admission), which only
    // the controller-manager creates: its presence shows the controllers are running.
    await waitFor('default ServiceAccount', all, async () => {
      await kubectl(['get', 'serviceaccount', 'default', '-n', 'default']);
      return true;
    });
    if (plan && nodeBinDir) {
      realNode = await startRealNode({
        plan,
        nodeBinDir,
        pki,
        apiPort,
        logDir,
        track,
        controlPlane: all,
        kubectl,
      });
    }

    return {
      kubeconfigPath,
      server,
      binDir,
      nodeNames,
      realNode:
        plan && nodeBinDir
          ? {
              name: plan.name,
              nodeIp: plan.nodeIp,
              netns: plan.netns,
              cgroup: plan.cgroup,
              nodeBinDir,
            }
          : undefined,
      portForward: (target, remotePort, { namespace } = {}) =>
        portForward(
          bin('kubectl'),
          [
            '--kubeconfig',
            kubeconfigPath,
            ...(namespace ? ['-n', namespace] : []),
            'port-forward',
            '--address',
            '127.0.0.1',
            target,
            `:${remotePort}`,
          ],
          forwards,
        ),
      loadImage: (archivePath) => {
        if (!realNode) return Promise.reject(new Error('this cluster has no real node'));
        return realNode.loadImage(archivePath);
      },
      exposeToPods: (port) => {
        if (!realNode) return Promise.reject(new Error('this cluster has no real node'));
        return realNode.exposeToPods(port);
      },
      workDir: dir,
      pids: () => processes.filter((p) => p.running).map((p) => p.pid ?? 0),
      kubectl,
      helm,
      userKubeconfig: async (user, groups = []) => {
        const cert = await issueClientCert(pki, user, groups);
        const path = join(dir, `user-${user.replace(/[^a-zA-Z0-9_.-]/g, '_')}.kubeconfig`);
        await writeKubeconfig(path, server, pki, user, cert);
        return path;
      },
      restartApiserver: async ({ downMs = 0, crash = false } = {}) => {
        // A graceful stop with watches open takes kube-apiserver over 10 s to exit, so it gets
        // 3 s before SIGKILL; `crash` skips the grace entirely.
        await apiserver.stop(crash ? 0 : 3_000);
        if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
        apiserver.start();
        writeFileSync(join(dir, 'pids'), processes.map((x) => x.pid ?? '').join(' '));
        await apiserverReady();
      },
      stop: stopAll,
    };
  } catch (error) {
    const logs = processes
      .map((p) => `--- ${p.spec.name} (last lines) ---\n${p.logTail(2_500)}`)
      .join('\n');
    await stopAll();
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${logs}`);
  }
}

/** A running `kubectl port-forward`. */
export interface PortForward {
  port: number;
  close(): Promise<void>;
  /**
   * Its stderr once it has exited, else undefined. kubectl ends a forward for good when one of
   * its connections fails inside the pod (e.g. reset by a relay whose upstream has no endpoint).
   */
  ended(): string | undefined;
}

function portForward(
  kubectl: string,
  args: string[],
  forwards: Set<ChildProcess>,
): Promise<PortForward> {
  const child = spawn(kubectl, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  forwards.add(child);
  let gone = false;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => {
    gone = true;
    forwards.delete(child);
  });
  const close = async (): Promise<void> => {
    child.kill('SIGTERM');
    await exited;
  };
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      void close();
      reject(new Error(`kubectl ${args.join(' ')}: no listener after 30 s: ${err}`));
    }, 30_000);
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /Forwarding from 127\.0\.0\.1:(\d+) ->/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve({ port: Number(match[1]), close, ended: () => (gone ? err.trim() : undefined) });
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`kubectl ${args.join(' ')} exited: ${err.trim()}`));
    });
  });
}
