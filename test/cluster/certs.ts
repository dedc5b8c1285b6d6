// A throw-away PKI for one cluster, made with the openssl CLI: a CA, the apiserver's serving
// certificate, client certificates (CN = user, O = groups) and the service-account key pair.
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
const DAYS = ['-days', '7'];

export interface Pki {
  dir: string;
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
}

export interface ClientCert {
  certPath: string;
  keyPath: string;
}

/** `extraIps`: more addresses the apiserver is reached on (the real node's side of its link). */
export async function createPki(
  dir: string,
  serviceIp: string,
  extraIps: string[] = [],
): Promise<Pki> {
  const pki: Pki = {
    dir,
    caCert: join(dir, 'ca.crt'),
    caKey: join(dir, 'ca.key'),
    serverCert: join(dir, 'apiserver.crt'),
    serverKey: join(dir, 'apiserver.key'),
    serviceAccountKey: join(dir, 'sa.key'),
    serviceAccountPub: join(dir, 'sa.pub'),
  };
  await run('openssl', [
    'req',
    '-x509',
    ...EC_KEY,
    ...DAYS,
    '-keyout',
    pki.caKey,
    '-out',
    pki.caCert,
    '-subj',
    '/CN=graphdock-test-ca',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign,digitalSignature',
  ]);
  const altNames = [
    'IP:127.0.0.1',
    `IP:${serviceIp}`,
    ...extraIps.map((ip) => `IP:${ip}`),
    'DNS:localhost',
    'DNS:kubernetes',
    'DNS:kubernetes.default',
    'DNS:kubernetes.default.svc',
    'DNS:kubernetes.default.svc.cluster.local',
  ];
  await issue(pki, pki.serverCert, pki.serverKey, '/CN=kube-apiserver', [
    `subjectAltName=${altNames.join(',')}`,
    'extendedKeyUsage=serverAuth',
  ]);
  // The apiserver signs service-account tokens with this key; the token controller needs it too.
  await run('openssl', [
    'genpkey',
    '-algorithm',
    'RSA',
    '-pkeyopt',
    'rsa_keygen_bits:2048',
    '-out',
    pki.serviceAccountKey,
  ]);
  await run('openssl', [
    'pkey',
    '-in',
    pki.serviceAccountKey,
    '-pubout',
    '-out',
    pki.serviceAccountPub,
  ]);
  return pki;
}

/** A client certificate for `user` in `groups` (system:masters makes it a cluster admin). */
export async function issueClientCert(
  pki: Pki,
  user: string,
  groups: string[],
): Promise<ClientCert> {
  const safe = user.replace(/[^a-zA-Z0-9_.-]/g, '_');
  const cert: ClientCert = {
    certPath: join(pki.dir, `user-${safe}.crt`),
    keyPath: join(pki.dir, `user-${safe}.key`),
  };
  const subject = `/CN=${escapeDn(user)}${groups.map((group) => `/O=${escapeDn(group)}`).join('')}`;
  await issue(pki, cert.certPath, cert.keyPath, subject, ['extendedKeyUsage=clientAuth']);
  return cert;
}

async function issue(
  pki: Pki,
  certPath: string,
  keyPath: string,
  subject: string,
  extensions: string[],
): Promise<void> {
  await run('openssl', [
    'req',
    '-x509',
    ...EC_KEY,
    ...DAYS,
    '-CA',
    pki.caCert,
    '-CAkey',
    pki.caKey,
    '-keyout',
    keyPath,
    '-out',
    certPath,
    '-subj',
    subject,
    '-addext',
    'basicConstraints=critical,CA:FALSE',
    '-addext',
    'keyUsage=critical,digitalSignature,keyEncipherment',
    ...extensions.flatMap((ext) => ['-addext', ext]),
  ]);
}

function escapeDn(value: string): string {
  return value.replace(/[/\\=,+]/g, (ch) => `\\${ch}`);
}

/** Kubeconfig YAML with every credential inlined, so the file works from any directory. */
export async function writeKubeconfig(
  path: string,
  server: string,
  pki: Pki,
  user: string,
  client: ClientCert,
): Promise<void> {
  const b64 = async (file: string): Promise<string> => (await readFile(file)).toString('base64');
  const text = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: graphdock-test',
    '  cluster:',
    `    server: ${server}`,
    `    certificate-authority-data: ${await b64(pki.caCert)}`,
    'users:',
    `- name: ${JSON.stringify(user)}`,
    '  user:',
    `    client-certificate-data: ${await b64(client.certPath)}`,
    `    client-key-data: ${await b64(client.keyPath)}`,
    'contexts:',
    '- name: graphdock-test',
    '  context:',
    '    cluster: graphdock-test',
    `    user: ${JSON.stringify(user)}`,
    '    namespace: default',
    'current-context: graphdock-test',
    '',
  ].join('\n');
  await writeFile(path, text, { mode: 0o600 });
}
