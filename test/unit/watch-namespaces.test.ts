// Watch namespaces: parsing the setting once, and what the operator reports for a listener whose
// namespaces it does not all watch.
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  loadControlPlaneEnv,
  loadOperatorEnv,
  parseWatchNamespaces,
} from '../../common/config/index.js';
import { degradedCondition, type Listener } from '../../operator/reconcile/index.js';

const listener = (namespaces: string[] | null) =>
  ({
    metadata: { name: 'l' },
    spec: { compute_id: 'c', compute_type: 'k8s', compute_config: { k8s_namespaces: namespaces } },
  }) as unknown as Listener;

describe('GRAPHDOCK_WATCH_NAMESPACES', () => {
  it('is a comma list, deduplicated; unset or empty means all namespaces', () => {
    expect(parseWatchNamespaces('a, b,a ,,c')).toEqual(['a', 'b', 'c']);
    expect(parseWatchNamespaces(undefined)).toEqual([]);
    expect(parseWatchNamespaces('')).toEqual([]);
    expect(loadOperatorEnv({ GRAPHDOCK_WATCH_NAMESPACES: 'agents' }).watchNamespaces).toEqual([
      'agents',
    ]);
    expect(loadControlPlaneEnv({}).watchNamespaces).toEqual([]);
  });

  it('refuses names that are not namespaces, naming the variable', () => {
    expect(() => parseWatchNamespaces('Agents')).toThrow(/DNS label/);
    expect(() => loadOperatorEnv({ GRAPHDOCK_WATCH_NAMESPACES: 'ok,not_ok' })).toThrow(ConfigError);
    expect(() => loadControlPlaneEnv({ GRAPHDOCK_WATCH_NAMESPACES: 'a/b' })).toThrow(
      /GRAPHDOCK_WATCH_NAMESPACES/,
    );
  });
});

describe("the listener's Degraded condition", () => {
  it('False when the operator watches everything, or every namespace of the listener', () => {
    expect(degradedCondition(listener(['a', 'b']), []).status).toBe('False');
    expect(degradedCondition(listener(null), []).status).toBe('False');
    expect(degradedCondition(listener(['a']), ['a', 'b']).status).toBe('False');
  });

  it('True naming the unwatched namespaces, or saying the listener allows all', () => {
    const some = degradedCondition(listener(['a', 'elsewhere']), ['a']);
    expect(some).toMatchObject({ status: 'True', reason: 'NamespacesNotWatched' });
    expect(some.message).toContain('Namespaces elsewhere of this listener are not watched');
    expect(some.message).toContain('watches only a');
    const all = degradedCondition(listener(null), ['a']);
    expect(all.status).toBe('True');
    expect(all.message).toContain('allows every namespace');
  });
});
