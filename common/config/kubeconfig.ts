// The Kubernetes client's configuration, as kubectl finds it (KUBECONFIG, ~/.kube/config, the
// pod's service account). A file that cannot be read or parsed stops the start with a ConfigError
// naming it, rather than the client's stack trace.
import { ConfigError } from './index.js';

/** What this needs of @kubernetes/client-node's KubeConfig (not imported: the runtime never loads it). */
export interface DefaultLoadable {
  loadFromDefault(): void;
}

export function loadDefaultKubeConfig<T extends DefaultLoadable>(config: T): T {
  try {
    config.loadFromDefault();
    return config;
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new ConfigError(
      `cannot load the Kubernetes configuration (KUBECONFIG, ~/.kube/config or the pod's service account): ${reason}`,
    );
  }
}
