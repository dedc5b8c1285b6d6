import { describe, expect, it } from 'vitest';
import type { AgentDeploymentSpec } from '../../common/resources/index.js';
import {
  createIssues,
  MASKED_SECRET_VALUE,
  planPatch,
  RESERVED_SECRET_NAMES,
  secretIssues,
  unmaskSecrets,
} from '../../api/index.js';

const listenerId = '3f2b6a3e-8a0e-4b8e-9d3e-0a1b2c3d4e5f';

const create = (over: Record<string, unknown> = {}) => ({
  name: 'agent',
  source: 'external_docker' as const,
  source_config: { listener_id: listenerId, listener_config: { k8s_namespace: 'agents' } },
  source_revision_config: { image_uri: 'registry.local/agent:1' },
  secrets: [],
  ...over,
});

const current: AgentDeploymentSpec = {
  workspace_id: '9f2b6a3e-8a0e-4b8e-9d3e-0a1b2c3d4e5f',
  name: 'agent',
  source: 'external_docker',
  source_config: {
    listener_id: listenerId,
    listener_config: { k8s_namespace: 'agents' },
    custom_url: null,
    resource_spec: { min_scale: 1 },
  },
  source_revision_config: { image_uri: 'registry.local/agent:1' },
  secret_names: ['OPENAI_API_KEY'],
  latest_revision: { id: '1f2b6a3e-8a0e-4b8e-9d3e-0a1b2c3d4e5f', number: 1 },
};

describe('secret rules', () => {
  it('refuses reserved names, invalid names and duplicates, each at its own index', () => {
    const issues = secretIssues(
      [
        { name: 'POSTGRES_URI', value: 'x' },
        { name: 'OK_NAME', value: 'x' },
        { name: '1BAD', value: 'x' },
        { name: 'OK_NAME', value: 'y' },
      ],
      ['body', 'secrets'],
    );
    expect(issues.map((i) => i.loc)).toEqual([
      ['body', 'secrets', 0, 'name'],
      ['body', 'secrets', 2, 'name'],
      ['body', 'secrets', 3, 'name'],
    ]);
    expect(issues[0]?.msg).toMatch(/reserved/);
    expect(issues[2]?.msg).toMatch(/duplicated/);
  });

  it('allows the names a self-hosted install may set', () => {
    expect(RESERVED_SECRET_NAMES.has('POSTGRES_URI_CUSTOM')).toBe(false);
    expect(secretIssues([{ name: 'POSTGRES_URI_CUSTOM', value: 'x' }], [])).toEqual([]);
  });
});

describe('masked secret values', () => {
  it('a masked value sent back keeps the stored one; unknown names and creates refuse it', () => {
    const stored = [{ name: 'A', value: 'secret-a' }];
    expect(
      unmaskSecrets(
        [
          { name: 'A', value: MASKED_SECRET_VALUE },
          { name: 'B', value: 'new' },
        ],
        stored,
      ),
    ).toEqual({
      secrets: [
        { name: 'A', value: 'secret-a' },
        { name: 'B', value: 'new' },
      ],
      issues: [],
    });
    const unknown = unmaskSecrets([{ name: 'C', value: MASKED_SECRET_VALUE }], stored);
    expect(unknown.issues.map((i) => i.loc)).toEqual([['body', 'secrets', 0, 'value']]);
    const created = createIssues(create({ secrets: [{ name: 'A', value: MASKED_SECRET_VALUE }] }));
    expect(created.map((i) => i.loc)).toEqual([['body', 'secrets', 0, 'value']]);
  });
});

describe('createIssues', () => {
  it('accepts a complete external_docker deployment', () => {
    expect(createIssues(create())).toEqual([]);
  });

  it('names every missing placement and image field', () => {
    const issues = createIssues(
      create({ source_config: {}, source_revision_config: { image_uri: null } }),
    );
    expect(issues.map((i) => i.loc.join('.'))).toEqual([
      'body.source_revision_config.image_uri',
      'body.source_config.listener_id',
      'body.source_config.listener_config.k8s_namespace',
    ]);
    expect(issues[1]?.msg).toContain("'listener_id' is required");
  });

  it('refuses github sources and github-only fields', () => {
    expect(createIssues(create({ source: 'github' }))[0]?.loc).toEqual(['body', 'source']);
    const issues = createIssues(
      create({
        source_config: {
          listener_id: listenerId,
          listener_config: { k8s_namespace: 'agents' },
          repo_url: 'https://example.com/r',
        },
      }),
    );
    expect(issues[0]?.loc).toEqual(['body', 'source_config', 'repo_url']);
  });
});

describe('planPatch', () => {
  it('makes a new revision for a new image, resource_spec or secrets, and keeps the rest', () => {
    expect(planPatch(current, { source_revision_config: { image_uri: 'img:2' } })).toMatchObject({
      issues: [],
      newRevision: true,
      imageUri: 'img:2',
      resourceSpec: { min_scale: 1 },
    });
    expect(
      planPatch(current, { source_config: { resource_spec: { max_scale: 3 } } }),
    ).toMatchObject({
      newRevision: true,
      imageUri: 'registry.local/agent:1',
      resourceSpec: { min_scale: 1, max_scale: 3 },
    });
    expect(planPatch(current, { secrets: [] }).newRevision).toBe(true);
  });

  it('merges a partial resource_spec over the stored one; null clears a field', () => {
    const stored = {
      ...current,
      source_config: {
        ...current.source_config,
        resource_spec: { min_scale: 1, max_scale: 2, cpu: 0.5, memory_mb: 512 },
      },
    };
    expect(
      planPatch(stored, { source_config: { resource_spec: { min_scale: 2, max_scale: 4 } } })
        .resourceSpec,
    ).toEqual({ min_scale: 2, max_scale: 4, cpu: 0.5, memory_mb: 512 });
    expect(
      planPatch(stored, { source_config: { resource_spec: { cpu: null } } }).resourceSpec,
    ).toEqual({ min_scale: 1, max_scale: 2, memory_mb: 512 });
    expect(planPatch(stored, { secrets: [] }).resourceSpec).toEqual(
      stored.source_config.resource_spec,
    );
  });

  it('refuses min_scale above max_scale and requests above limits, at the field sent', () => {
    const stored = {
      ...current,
      source_config: { ...current.source_config, resource_spec: { min_scale: 1, max_scale: 2 } },
    };
    const tooHigh = planPatch(stored, { source_config: { resource_spec: { min_scale: 3 } } });
    expect(tooHigh.issues).toEqual([
      {
        loc: ['body', 'source_config', 'resource_spec', 'min_scale'],
        msg: "'min_scale' (3) must not be greater than 'max_scale' (2)",
        type: 'value_error',
      },
    ]);
    const tooLow = planPatch(stored, { source_config: { resource_spec: { max_scale: 0 } } });
    expect(tooLow.issues.map((i) => i.loc.at(-1))).toEqual(['max_scale']);
    const limits = createIssues(
      create({
        source_config: {
          listener_id: listenerId,
          listener_config: { k8s_namespace: 'agents' },
          resource_spec: { cpu: 2, cpu_limit: 1, memory_mb: 512, memory_limit_mb: 1024 },
        },
      }),
    );
    expect(limits.map((i) => i.loc.join('.'))).toEqual(['body.source_config.resource_spec.cpu']);
  });

  it('changes custom_url without a new revision', () => {
    expect(
      planPatch(current, { source_config: { custom_url: 'https://a.example' } }),
    ).toMatchObject({ newRevision: false, customUrl: 'https://a.example' });
    expect(planPatch(current, {}).newRevision).toBe(false);
  });

  it('refuses changes to name, source and listener placement, but not restating them', () => {
    const refused = planPatch(current, {
      name: 'other',
      source: 'github',
      source_config: {
        listener_id: '7f2b6a3e-8a0e-4b8e-9d3e-0a1b2c3d4e5f',
        listener_config: { k8s_namespace: 'elsewhere' },
      },
    });
    expect(refused.issues.map((i) => i.loc.at(-1))).toEqual([
      'name',
      'source',
      'listener_id',
      'listener_config',
    ]);
    expect(refused.issues.every((i) => i.type === 'immutable')).toBe(true);
    const restated = planPatch(current, {
      name: 'agent',
      source_config: {
        listener_id: listenerId.toUpperCase(),
        listener_config: { k8s_namespace: 'agents' },
      },
    });
    expect(restated.issues).toEqual([]);
  });
});
