// client-node 1.x builds a new https.Agent for every request (KubeConfig.createAgent), so each
// call pays a fresh TLS handshake and secure context: measured, that dominated the operator's
// CPU and memory under load. This reuses one keep-alive agent per set of TLS options.
import { createHash } from 'node:crypto';
import { Agent } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

type AgentOptions = Record<string, unknown>;
type CreateAgent = (
  cluster: { server?: string; proxyUrl?: string } | null,
  o: AgentOptions,
) => unknown;

export function reuseConnections(kubeConfig: KubeConfig, maxSockets = 64): KubeConfig {
  const target = kubeConfig as unknown as { createAgent: CreateAgent };
  const original = target.createAgent.bind(kubeConfig);
  const agents = new Map<string, Agent>();
  target.createAgent = (cluster, options) => {
    // Proxies and plain HTTP keep the library's own behaviour.
    if (!cluster?.server?.startsWith('https:') || cluster.proxyUrl)
      return original(cluster, options);
    // Buffers (ca, cert, key) serialise with their bytes, so the key covers the credentials.
    const key = createHash('sha256')
      .update(JSON.stringify([cluster.server, options]))
      .digest('hex');
    let agent = agents.get(key);
    if (!agent) {
      agent = new Agent({ ...options, keepAlive: true, maxSockets, maxFreeSockets: 16 });
      agents.set(key, agent);
    }
    return agent;
  };
  return kubeConfig;
}
