// Command lines and manifests of the cluster's components.
import { join } from 'node:path';
import type { Pki } from './certs.js';

export const SERVICE_CIDR = '10.96.0.0/16';
export const SERVICE_IP = '10.96.0.1';

export function apiserverArgs(o: {
  dir: string;
  pki: Pki;
  etcdUrl: string;
  apiPort: number;
}): string[] {
  return [
    `--etcd-servers=${o.etcdUrl}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
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
    // The `kubernetes` Service's endpoints would point at 127.0.0.1, which endpoint validation
    // refuses; nothing in the tests reaches the apiserver through that Service.
    '--endpoint-reconciler-type=none',
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
