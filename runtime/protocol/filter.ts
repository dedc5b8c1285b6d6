// Which events a subscription receives: its channels, namespace prefixes and depth.
import type { ProtocolEvent } from './thread-events.js';

export interface EventFilter {
  channels: readonly string[];
  namespaces?: string[][] | undefined;
  depth?: number | undefined;
}

/** The channel an event belongs to: `input.*` to `input`, named custom events to `custom:<name>`. */
export function channelOf(event: ProtocolEvent): string {
  if (event.method === 'input.requested' || event.method === 'input.answered') return 'input';
  if (event.method === 'custom') {
    const data = event.params.data as { name?: unknown } | null;
    if (data && typeof data === 'object' && typeof data.name === 'string')
      return `custom:${data.name}`;
  }
  return event.method;
}

/** `tools` matches `tools:<task id>`: a prefix segment without `:` names the node. */
function segmentMatches(prefix: string, segment: string): boolean {
  if (prefix === segment) return true;
  return !prefix.includes(':') && segment.split(':', 1)[0] === prefix;
}

function underPrefix(namespace: string[], prefix: string[], depth: number | undefined): boolean {
  if (namespace.length < prefix.length) return false;
  if (!prefix.every((segment, i) => segmentMatches(segment, namespace[i]!))) return false;
  return depth === undefined || namespace.length - prefix.length <= depth;
}

export function matches(event: ProtocolEvent, filter: EventFilter): boolean {
  const channel = channelOf(event);
  const wanted =
    filter.channels.includes(channel) ||
    (channel.startsWith('custom:') && filter.channels.includes('custom'));
  if (!wanted) return false;
  const namespace = event.params.namespace;
  const prefixes = filter.namespaces?.length ? filter.namespaces : [[]];
  return prefixes.some((prefix) => underPrefix(namespace, prefix, filter.depth));
}
