// A real node beside the kwok ones: containerd (runc, CNI bridge) runs real containers for a
// kubelet, and kube-proxy programs Services, all three inside a network namespace of their own.
// So the node's ports (kubelet 10250, containerd's stream server, kube-proxy's), its bridge and
// every iptables rule stay out of the host and out of any other cluster, and removing the
// namespace removes them all. The namespace is linked to the host by one veth pair: the
// apiserver reaches the kubelet on the node's end, the node (and its pods, through the
// `kubernetes` Service) reach the apiserver on the host's end.
import { execFile } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { basename, dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { issueClientCert, writeKubeconfig, type Pki } from './certs.js';
import { ClusterProcess } from './process.js';
import { waitFor } from './support.js';

const execFileAsync = promisify(execFile);
/** CI's environment may lack the sbin folders where Debian puts ip, sysctl, runc, iptables. */
export const NODE_ENV = {
  PATH: [process.env.PATH, '/usr/local/sbin', '/usr/sbin', '/sbin'].filter(Boolean).join(':'),
};
/** Runs a system command with NODE_ENV's PATH. */
export function run(
  command: string,
  args: string[],
  options: { timeout?: number } = {},
): Promise<{ stdout: string; stderr: string }> {
  return execFileAsync(command, args, {
    timeout: 60_000,
    ...options,
    env: { ...process.env, ...NODE_ENV },
  });
}

/** The pods' subnet; every node has its own namespace, so every cluster may use the same one. */
export const POD_CIDR = '10.85.0.0/24';
export const REAL_NODE_LABEL = 'graphdock.test/node';
/** Names build-node-tools.sh gives its images. */
export const SANDBOX_IMAGE = 'graphdock.test/pause:1';
export const BUSYBOX_IMAGE = 'graphdock.test/busybox:1';
export const CLEANUP_SCRIPT = join(import.meta.dirname, 'node-cleanup.sh');
const CNI_BIN_DIR = '/usr/lib/cni';
/** Kernel settings kubelet changes on start (container_manager_linux.go); restored at stop. */
const KUBELET_SYSCTLS = [
  'vm.overcommit_memory',
  'vm.panic_on_oom',
  'kernel.panic',
  'kernel.panic_on_oops',
  'kernel.keys.root_maxkeys',
  'kernel.keys.root_maxbytes',
];

/** Fixed host folders the node's programs create if missing; removed again if it made them. */
export const HOST_DIRS = [
  '/var/log/containers', // kubelet's links to container logs
  '/var/lib/kubelet', // kubelet's device-plugin socket: a path compiled in
  '/run/containerd', // shims' sockets (/run/containerd/s)
  '/run/netns',
];

export interface NodePlan {
  name: string;
  /** <workDir>/node: every file, mount and socket of the node lives below it. */
  dir: string;
  netns: string;
  hostIf: string;
  nodeIf: string;
  /** Host end of the veth link (the apiserver's address for the node). */
  hostIp: string;
  /** Node end (kubelet's InternalIP). */
  nodeIp: string;
  /** kubelet's --cgroup-root: pods' cgroups live below it in every hierarchy. */
  cgroup: string;
  socket: string;
  sandboxImage: string;
}

/** Names and addresses for the node of the cluster in `workDir`, before anything starts. */
export function planRealNode(workDir: string): NodePlan {
  const id = basename(workDir)
    .replace(/^graphdock-cluster-/, '')
    .replace(/[^a-zA-Z0-9]/g, '')
    .slice(0, 8);
  const dir = join(workDir, 'node');
  // A /30 in 10.201.0.0/16 per cluster; interface names are <= 15 characters.
  const block = randomInt(0, 16_384) * 4;
  const prefix = `10.201.${block >> 8}.`;
  return {
    name: `real-node-${id.toLowerCase()}`,
    dir,
    netns: `graphdock-${id}`,
    hostIf: `gdh${id}`,
    nodeIf: `gdn${id}`,
    hostIp: `${prefix}${(block & 255) + 1}`,
    nodeIp: `${prefix}${(block & 255) + 2}`,
    cgroup: `/graphdock-${id}`,
    socket: join(dir, 'containerd', 'containerd.sock'),
    sandboxImage: SANDBOX_IMAGE,
  };
}

export interface RealNode {
  plan: NodePlan;
  processes: ClusterProcess[];
  /** Imports an OCI (or docker-save) image archive into the node's containerd; image names. */
  loadImage(archivePath: string): Promise<string[]>;
  /**
   * A relay on the host end of the node's link (a free port) to 127.0.0.1:`port`, so pods reach
   * a server the test runs on the host (the control plane's api); closed by stop().
   */
  exposeToPods(port: number): Promise<{ host: string; port: number; close(): Promise<void> }>;
  /** Graceful stop of kube-proxy, kubelet and containerd, then node-cleanup.sh. */
  stop(): Promise<void>;
}

export async function startRealNode(o: {
  plan: NodePlan;
  nodeBinDir: string;
  pki: Pki;
  apiPort: number;
  logDir: string;
  /** Starts and registers a process with the cluster (pids file, exit hook). */
  track: (p: ClusterProcess) => ClusterProcess;
  /** Processes whose death means the cluster is broken (control plane). */
  controlPlane: ClusterProcess[];
  kubectl: (args: string[]) => Promise<string>;
}): Promise<RealNode> {
  const { plan } = o;
  const processes: ClusterProcess[] = [];
  let relay: ApiserverRelay | undefined;
  const exposed = new Set<ApiserverRelay>();
  const stop = async (): Promise<void> => {
    for (const p of [...processes].reverse()) await p.stop(5_000);
    await relay?.close();
    for (const r of exposed) await r.close();
    await cleanupNode(plan);
  };
  const ctr = (args: string[]): Promise<{ stdout: string }> =>
    run('ctr', ['--address', plan.socket, '--namespace', 'k8s.io', ...args], {
      timeout: 120_000,
    });
  const loadImage = async (archivePath: string): Promise<string[]> => {
    const { stdout } = await ctr(['images', 'import', archivePath]);
    return [...stdout.matchAll(/^unpacking (\S+) \(/gm)].map((m) => m[1] as string);
  };

  try {
    await prepareHost(plan);
    relay = await relayApiserver(plan.hostIp, o.apiPort);
    const start = (name: string, command: string, args: string[]): ClusterProcess => {
      const p = o.track(
        new ClusterProcess({
          name,
          // nsenter execs in place, so the tracked pid is the component's own.
          command: 'nsenter',
          args: [`--net=/run/netns/${plan.netns}`, '--', command, ...args],
          logDir: o.logDir,
          env: NODE_ENV,
        }),
      );
      processes.push(p);
      return p;
    };
    const all = (): ClusterProcess[] => [...o.controlPlane, ...processes];

    const containerdConfig = join(plan.dir, 'containerd', 'config.toml');
    writeFileSync(containerdConfig, containerdToml(plan));
    start('containerd', 'containerd', ['--config', containerdConfig]);
    await waitFor('containerd', all(), async () => {
      await ctr(['version']);
      return true;
    });
    await loadImage(join(o.nodeBinDir, 'images', 'pause.oci.tar'));

    const server = `https://${plan.hostIp}:${o.apiPort}`;
    const kubeconfig = async (file: string, user: string, groups: string[]): Promise<string> => {
      const path = join(plan.dir, file);
      await writeKubeconfig(path, server, o.pki, user, await issueClientCert(o.pki, user, groups));
      return path;
    };
    // system:masters rather than the Node authorizer, which this cluster does not run.
    const kubeletKubeconfig = await kubeconfig('kubelet.kubeconfig', `system:node:${plan.name}`, [
      'system:nodes',
      'system:masters',
    ]);
    // The built-in system:node-proxier binding covers this user.
    const proxyKubeconfig = await kubeconfig('kube-proxy.kubeconfig', 'system:kube-proxy', []);

    const kubeletConfig = join(plan.dir, 'kubelet-config.json');
    writeFileSync(kubeletConfig, JSON.stringify(kubeletConfiguration(plan, o.pki), null, 2));
    start('kubelet', join(o.nodeBinDir, 'kubelet'), [
      `--config=${kubeletConfig}`,
      `--kubeconfig=${kubeletKubeconfig}`,
      `--root-dir=${join(plan.dir, 'kubelet')}`,
      `--cert-dir=${join(plan.dir, 'kubelet', 'pki')}`,
      `--hostname-override=${plan.name}`,
      `--node-ip=${plan.nodeIp}`,
      `--node-labels=${REAL_NODE_LABEL}=real`,
      '--v=1',
    ]);
    const proxyConfig = join(plan.dir, 'kube-proxy-config.json');
    writeFileSync(proxyConfig, JSON.stringify(kubeProxyConfiguration(plan, proxyKubeconfig)));
    start('kube-proxy', join(o.nodeBinDir, 'kube-proxy'), [`--config=${proxyConfig}`, '--v=1']);

    await waitFor('real node Ready', all(), async () => {
      const status = await o.kubectl([
        'get',
        'node',
        plan.name,
        '-o',
        'jsonpath={.status.conditions[?(@.type=="Ready")].status}',
      ]);
      return status === 'True';
    });
    const exposeToPods = async (port: number) => {
      const r = await relayApiserver(plan.hostIp, port, 0);
      exposed.add(r);
      return {
        host: plan.hostIp,
        port: r.port,
        close: () => {
          exposed.delete(r);
          return r.close();
        },
      };
    };
    return { plan, processes, loadImage, exposeToPods, stop };
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
}

interface ApiserverRelay {
  port: number;
  close(): Promise<void>;
}

/**
 * The apiserver listens on 127.0.0.1 only; the node and its pods reach it on the host end of
 * their veth link (its advertised address) through this relay, which listens on that address
 * alone, so nothing outside the node's namespace can reach it.
 */
async function relayApiserver(
  hostIp: string,
  port: number,
  listenPort = port,
): Promise<ApiserverRelay> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  // Half-open both ways: a client that sends its request and then shuts its side down (as nc
  // does) still gets the whole answer.
  const server: Server = createServer({ allowHalfOpen: true }, (client) => {
    const upstream = createConnection({ host: '127.0.0.1', port, allowHalfOpen: true });
    track(client);
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listenPort, hostIp, resolve);
  });
  return {
    port: (server.address() as { port: number }).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** node-cleanup.sh: removes whatever of the node is still there (a no-op once done). */
export async function cleanupNode(plan: NodePlan): Promise<void> {
  await run('bash', [CLEANUP_SCRIPT, plan.dir], { timeout: 120_000 });
}

/** Folders, cgroups, the network namespace and its link; node.env first, so the cleanup
 * script (stop() or the watchdog) can undo a half-done setup too. */
async function prepareHost(plan: NodePlan): Promise<void> {
  for (const sub of ['containerd', 'cni/net.d', 'cni/ipam', 'pod-logs']) {
    mkdirSync(join(plan.dir, sub), { recursive: true });
  }
  const env = {
    NETNS: plan.netns,
    HOST_IF: plan.hostIf,
    CGROUP: plan.cgroup,
    SOCKET: plan.socket,
    STATE_DIR: join(plan.dir, 'containerd', 'state'),
    PIDS_FILE: join(dirname(plan.dir), 'pids'),
    // Folders kubelet, containerd's shims and `ip netns` make when missing (fixed paths).
    CREATED_DIRS: HOST_DIRS.filter((path) => !existsSync(path)).join(' '),
  };
  writeFileSync(
    join(plan.dir, 'node.env'),
    Object.entries(env)
      .map(([k, v]) => `${k}='${v}'`)
      .join('\n') + '\n',
  );
  const sysctls = await Promise.all(
    KUBELET_SYSCTLS.map(
      async (key) => `${key} ${(await run('sysctl', ['-n', key])).stdout.trim()}`,
    ),
  );
  writeFileSync(join(plan.dir, 'sysctl-before'), sysctls.join('\n') + '\n');

  // cgroup v1 mounts one hierarchy per controller; kubelet wants its root in each of them.
  const v2 = existsSync('/sys/fs/cgroup/cgroup.controllers');
  const hierarchies = v2
    ? ['/sys/fs/cgroup']
    : readdirSync('/sys/fs/cgroup')
        .map((name) => join('/sys/fs/cgroup', name))
        .filter((path) => existsSync(join(path, 'cgroup.procs')));
  for (const hierarchy of hierarchies) {
    const path = join(hierarchy, plan.cgroup);
    mkdirSync(path, { recursive: true });
    for (const file of ['cpuset.cpus', 'cpuset.mems']) {
      // A new v1 cpuset is empty and takes no task until given the parent's CPUs and nodes.
      if (!v2 && existsSync(join(path, file))) {
        writeFileSync(join(path, file), readFileSync(join(hierarchy, file)));
      }
    }
  }

  const ip = (...args: string[]): Promise<unknown> => run('ip', args);
  const inNode = (...args: string[]): Promise<unknown> => run('ip', ['-n', plan.netns, ...args]);
  await ip('netns', 'add', plan.netns);
  await ip('link', 'add', plan.hostIf, 'type', 'veth', 'peer', 'name', plan.nodeIf);
  await ip('link', 'set', plan.nodeIf, 'netns', plan.netns);
  await ip('addr', 'add', `${plan.hostIp}/30`, 'dev', plan.hostIf);
  await ip('link', 'set', plan.hostIf, 'up');
  await inNode('link', 'set', 'lo', 'up');
  await inNode('addr', 'add', `${plan.nodeIp}/30`, 'dev', plan.nodeIf);
  await inNode('link', 'set', plan.nodeIf, 'up');
  // Pods' traffic to anything but the apiserver ends at the host, which forwards nothing.
  await inNode('route', 'add', 'default', 'via', plan.hostIp);
  await run('ip', ['netns', 'exec', plan.netns, 'sysctl', '-q', '-w', 'net.ipv4.ip_forward=1']);

  writeFileSync(
    join(plan.dir, 'cni', 'net.d', '10-graphdock.conflist'),
    JSON.stringify(
      {
        cniVersion: '1.0.0',
        name: 'graphdock',
        plugins: [
          {
            type: 'bridge',
            bridge: 'cni0',
            isGateway: true,
            // Pods reach the apiserver on the host as the node's address: the host has no
            // route to the pod subnet (every cluster uses the same one).
            ipMasq: true,
            hairpinMode: true,
            ipam: {
              type: 'host-local',
              ranges: [[{ subnet: POD_CIDR }]],
              routes: [{ dst: '0.0.0.0/0' }],
              dataDir: join(plan.dir, 'cni', 'ipam'),
            },
          },
          { type: 'portmap', capabilities: { portMappings: true } },
        ],
      },
      null,
      2,
    ),
  );
}

function containerdToml(plan: NodePlan): string {
  const d = join(plan.dir, 'containerd');
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  return `# Generated by test/cluster/node.ts: every path below the cluster's folder.
version = 2
root = "${d}/root"
state = "${d}/state"
disabled_plugins = [
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing",
]

[grpc]
  address = "${plan.socket}"

[ttrpc]
  address = "${plan.socket}.ttrpc"

[debug]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "${d}/opt"

[${cri}]
  sandbox_image = "${plan.sandboxImage}"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  disable_apparmor = true
  # These machines deny CAP_SYS_RESOURCE: containers may not go below containerd's own score.
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true

[${cri}.containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"

[${cri}.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

[${cri}.containerd.runtimes.runc.options]
  BinaryName = "runc"
  Root = "${d}/runc"
  SystemdCgroup = false

[${cri}.cni]
  bin_dir = "${CNI_BIN_DIR}"
  conf_dir = "${join(plan.dir, 'cni', 'net.d')}"
  max_conf_num = 1
`;
}

function kubeletConfiguration(plan: NodePlan, pki: Pki): Record<string, unknown> {
  const endpoint = `unix://${plan.socket}`;
  return {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    address: plan.nodeIp,
    port: 10250,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    healthzPort: 10248,
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: false },
      // The apiserver's --kubelet-client-certificate is signed by the cluster CA.
      x509: { clientCAFile: pki.caCert },
    },
    authorization: { mode: 'AlwaysAllow' },
    containerRuntimeEndpoint: endpoint,
    imageServiceEndpoint: endpoint,
    cgroupDriver: 'cgroupfs',
    cgroupRoot: plan.cgroup,
    cgroupsPerQOS: true,
    // These machines mount cgroup v1, which kubelet refuses since 1.35 unless told otherwise.
    failCgroupV1: false,
    failSwapOn: false,
    podLogsDir: join(plan.dir, 'pod-logs'),
    volumePluginDir: join(plan.dir, 'kubelet', 'volume-plugins'),
    // No cluster DNS: pods resolve nothing by name (see README); no host resolv.conf leaks in.
    resolvConf: '',
    clusterDomain: 'cluster.local',
    // Images come only from archives; never collect them, never evict for a shared disk.
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    evictionHard: {
      'memory.available': '100Mi',
      'nodefs.available': '1%',
      'nodefs.inodesFree': '1%',
      'imagefs.available': '1%',
    },
    serializeImagePulls: false,
    nodeStatusUpdateFrequency: '5s',
    syncFrequency: '10s',
    fileCheckFrequency: '10s',
    maxPods: 50,
    protectKernelDefaults: false,
  };
}

function kubeProxyConfiguration(plan: NodePlan, kubeconfig: string): Record<string, unknown> {
  return {
    apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
    kind: 'KubeProxyConfiguration',
    clientConnection: { kubeconfig },
    hostnameOverride: plan.name,
    mode: 'iptables',
    clusterCIDR: POD_CIDR,
    bindAddress: plan.nodeIp,
    metricsBindAddress: '127.0.0.1:10249',
    healthzBindAddress: '127.0.0.1:10256',
    // Conntrack limits are machine-wide: leave them as they are.
    conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
    iptables: { localhostNodePorts: false, syncPeriod: '30s', minSyncPeriod: '0s' },
    detectLocalMode: 'ClusterCIDR',
  };
}
