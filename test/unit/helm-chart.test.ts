import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { CONTROL_PLANE_API_RULES } from '../../api/index.js';
import { OPERATOR_LEADER_ELECTION_RULES, OPERATOR_RULES } from '../../operator/index.js';
import { renderCrds } from '../../scripts/generate.js';
import {
  CHART_DIR,
  ChartValues,
  chartRbac,
  renderChartFiles,
  splitRules,
} from '../../scripts/helm/index.js';

describe('charts/graphdock generated files', () => {
  it('crds/, files/rbac.yaml and values.schema.json match the code (run `npm run generate`)', () => {
    const rendered = renderChartFiles(renderCrds());
    for (const [name, text] of rendered) {
      expect(readFileSync(join(CHART_DIR, name), 'utf8'), name).toBe(text);
    }
    // No stale CRD left behind in the chart after a kind is renamed or removed.
    const chartCrds = readdirSync(join(CHART_DIR, 'crds')).map((f) => join('crds', f));
    expect(chartCrds.sort()).toEqual(
      [...rendered.keys()].filter((k) => k.startsWith('crds')).sort(),
    );
  });

  it("the chart's CRDs are the same text as the repository's crds/", () => {
    for (const name of readdirSync(join(CHART_DIR, 'crds'))) {
      const top = readFileSync(join(CHART_DIR, '..', '..', 'crds', name), 'utf8');
      expect(readFileSync(join(CHART_DIR, 'crds', name), 'utf8'), name).toBe(top);
    }
  });
});

describe('chart values', () => {
  it('values.yaml satisfies the values schema', () => {
    const values = load(readFileSync(join(CHART_DIR, 'values.yaml'), 'utf8'));
    expect(ChartValues.safeParse(values).error?.issues).toBeUndefined();
  });

  it('refuses unknown keys, short API keys and bad namespace names', () => {
    const values = load(readFileSync(join(CHART_DIR, 'values.yaml'), 'utf8')) as ChartValues;
    const typo = { ...values, api: { ...values.api, replica: 2 } };
    expect(ChartValues.safeParse(typo).success).toBe(false);
    const shortKey = { ...values, bootstrap: { ...values.bootstrap, apiKey: 'short' } };
    expect(ChartValues.safeParse(shortKey).success).toBe(false);
    const badNamespace = { ...values, watchNamespaces: ['Not_A_Namespace'] };
    expect(ChartValues.safeParse(badNamespace).success).toBe(false);
  });
});

describe('chart RBAC', () => {
  it('cluster-wide mode grants exactly the code constants', () => {
    const rbac = chartRbac();
    expect(rbac.api.clusterWide).toEqual(CONTROL_PLANE_API_RULES);
    expect(rbac.operator.clusterWide).toEqual(OPERATOR_RULES);
    expect(rbac.leaderElection).toEqual(OPERATOR_LEADER_ELECTION_RULES);
  });

  it('namespaced mode keeps only cluster-scoped Listeners cluster-wide', () => {
    const split = splitRules([
      {
        apiGroups: ['graphdock.dev'],
        resources: ['listeners', 'agentdeployments'],
        verbs: ['get', 'list'],
      },
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
    ]);
    expect(split.namespacedModeCluster).toEqual([
      { apiGroups: ['graphdock.dev'], resources: ['listeners'], verbs: ['get', 'list'] },
    ]);
    expect(split.namespacedModeNamespace).toEqual([
      { apiGroups: ['graphdock.dev'], resources: ['agentdeployments'], verbs: ['get', 'list'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
    ]);
  });

  it('namespaced mode: cluster-wide only Listeners, nothing namespaced (not even list/watch)', () => {
    const rbac = chartRbac();
    for (const component of [rbac.api, rbac.operator]) {
      for (const rule of component.namespacedModeCluster) {
        expect(rule.apiGroups).toEqual(['graphdock.dev']);
        expect(rule.resources.every((r) => r.split('/')[0] === 'listeners')).toBe(true);
      }
    }
    const operatorWrites = rbac.operator.namespacedModeNamespace.filter((r) =>
      r.verbs.includes('create'),
    );
    expect(operatorWrites.flatMap((r) => r.resources).sort()).toEqual(
      [
        'deployments',
        'horizontalpodautoscalers',
        'poddisruptionbudgets',
        'events',
        'secrets',
        'services',
      ].sort(),
    );
  });
});
