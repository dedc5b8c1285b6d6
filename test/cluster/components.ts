// Command lines and manifests of the cluster's components.
import { join } from 'node:path';
import type { ClientCert, Pki } from './certs.js';

export const SERVICE_CIDR = '10.96.0.0/16';
export const SERVICE_IP = '10.96.0.1';

export function apiserverArgs(o: {
  dir: string;
  pki: Pki;
  etcdUrl: string;
  apiPort: number;
  /** With a real node: where its kubelet, kube-proxy and pods reach the apiserver. */
  realNode?: { hostIp: string; kubeletClient: ClientCert };
}): string[] {
  const node = o.realNode;
  return [
    `--etcd-servers=${o.etcdUrl}`,
    ...(node
      ? [
          // The node lives in its own network namespace and reaches the apiserver on the host
          // end of its veth link, through a relay (node.ts); the `kubernetes` Service points
          // there for pods. The apiserver itself listens on loopback only.
          '--bind-address=127.0.0.1',
          `--advertise-address=${node.hostIp}`,
          `--kubelet-client-certificate=${node.kubeletClient.certPath}`,
          `--kubelet-client-key=${node.kubeletClient.keyPath}`,
          '--kubelet-preferred-address-types=InternalIP',
        ]
      : [
          '--bind-address=127.0.0.1',
          '--advertise-address=127.0.0.1',
          // The `kubernetes` Service's endpoints would point at 127.0.0.1, which endpoint
          // validation refuses; nothing reaches the apiserver through that Service here.
          '--endpoint-reconciler-type=none',
        ]),
    `--secure-port=${o.apiPort}`,
    `--cert-dir=${join(o.dir, 'apiserver-certs')}`,
    `--tls-cert-file=${o.pki.serverCert}`,
    `--tls-private-key-file=${o.pki.serverKey}`,
    `--client-ca-file=${o.pki.caCert}`,
    '--authorization-mode=RBAC',
    `--service-account-issuer=https://kubernetes.default.svc.cluster.local`,
    `--service-account-key-file=${o.pki.serviceAccountPub}`,
    `--service-account-signing-key-file=${o.pki.serviceAccountKey}`,
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
    '--allow-privileged=true',
    '--profiling=false',
    '--v=1',
  ];
}

/** Fake nodes that kwok manages (annotation) and keeps Ready; no taint, so any pod lands. */
export function nodeManifests(names: string[]): string {
  const nodes = names.map((name) => ({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
      labels: {
        type: 'kwok',
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
      },
    },
    status: {
      allocatable: { cpu: '32', memory: '256Gi', pods: '110' },
      capacity: { cpu: '32', memory: '256Gi', pods: '110' },
    },
  }));
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items: nodes });
}
