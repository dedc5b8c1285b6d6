// PostgreSQL from its image archive as a pod on the real node, behind a Service named
// `postgres` (reached by its ClusterIP: the test node has no cluster DNS).
import { REAL_NODE_LABEL } from './index.js';

export function postgresManifests(image: string, password: string): object[] {
  return [
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'postgres', labels: { app: 'postgres' } },
      spec: {
        nodeSelector: { [REAL_NODE_LABEL]: 'real' },
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: 'postgres',
            image,
            imagePullPolicy: 'Never',
            env: [{ name: 'POSTGRES_PASSWORD', value: password }],
            ports: [{ containerPort: 5432 }],
            readinessProbe: { tcpSocket: { port: 5432 }, periodSeconds: 1 },
            // The entrypoint makes $PGDATA below it; an emptyDir's root is world-writable.
            volumeMounts: [{ name: 'data', mountPath: '/var/lib/postgresql/data' }],
          },
        ],
        volumes: [{ name: 'data', emptyDir: {} }],
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'postgres' },
      spec: { selector: { app: 'postgres' }, ports: [{ port: 5432, targetPort: 5432 }] },
    },
  ];
}
