// Test-only entry point: `graphdock api` composed with a Kubernetes client that SIGKILLs its own
// process just before its Nth write (GRAPHDOCK_TEST_KILL_AT_WRITE), so a test can stop the api
// between any two writes of a request. Production code has no such hook: this file composes
// the same runApi with a different client, through the composition root's kubeResources option.
// Run as: node --import tsx test/cluster/fault/killing-api.ts api --port <n> --host <h>
import { parseArgs } from 'node:util';
import { KubeResources } from '../../../api/index.js';
import { runApi } from '../../../cli/api-commands.js';

const killAt = Number(process.env.GRAPHDOCK_TEST_KILL_AT_WRITE ?? '0');
let writes = 0;

/** Counts a write; at the chosen one the process dies before the request leaves. */
function beforeWrite(): void {
  writes += 1;
  if (writes === killAt) process.kill(process.pid, 'SIGKILL');
}

class KillingKube extends KubeResources {
  override create: KubeResources['create'] = (...args) => {
    beforeWrite();
    return super.create(...args);
  };
  override replace: KubeResources['replace'] = (...args) => {
    beforeWrite();
    return super.replace(...args);
  };
  override annotate: KubeResources['annotate'] = (...args) => {
    beforeWrite();
    return super.annotate(...args);
  };
  override delete: KubeResources['delete'] = (...args) => {
    beforeWrite();
    return super.delete(...args);
  };
  override createSecret: KubeResources['createSecret'] = (...args) => {
    beforeWrite();
    return super.createSecret(...args);
  };
  override deleteSecret: KubeResources['deleteSecret'] = (...args) => {
    beforeWrite();
    return super.deleteSecret(...args);
  };
}

const { values } = parseArgs({
  args: process.argv.slice(3),
  options: { port: { type: 'string' }, host: { type: 'string' } },
  strict: false,
});
process.exitCode = await runApi(
  {
    port: values.port === undefined ? undefined : Number(values.port),
    host: typeof values.host === 'string' ? values.host : undefined,
  },
  { kubeResources: (...args) => new KillingKube(...args) },
);
