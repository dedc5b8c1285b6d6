import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  AgentRevisionSpec,
  CUSTOM_RESOURCES,
  buildCrd,
  immutable,
  listenerResourceName,
  openApiSchema,
} from '../../common/resources/index.js';

type Schema = Record<string, unknown> & { properties?: Record<string, Schema>; items?: Schema };

/** Every node of a structural schema names its type unless it explicitly keeps unknown fields. */
function assertStructural(node: Schema, path: string): void {
  if (node['x-kubernetes-preserve-unknown-fields'] !== true) {
    expect(node.type, `${path} has a type`).toBeTypeOf('string');
  }
  expect(node.additionalProperties, `${path} additionalProperties`).not.toBe(false);
  if (node.properties) expect(node.additionalProperties, path).toBeUndefined();
  for (const key of ['anyOf', 'oneOf', 'allOf', 'not', '$ref', 'const']) {
    expect(node[key], `${path} uses ${key}`).toBeUndefined();
  }
  for (const [name, child] of Object.entries(node.properties ?? {}))
    assertStructural(child, `${path}.${name}`);
  if (node.items) assertStructural(node.items, `${path}[]`);
  if (typeof node.additionalProperties === 'object')
    assertStructural(node.additionalProperties as Schema, `${path}{}`);
}

describe('custom resource definitions', () => {
  it.each(CUSTOM_RESOURCES.map((r) => [r.kind.kind, r] as const))(
    '%s has a structural schema, a status subresource, short names and an Age column',
    (_kind, source) => {
      const crd = buildCrd(source);
      const version = crd.spec.versions[0]!;
      assertStructural(version.schema.openAPIV3Schema, source.kind.kind);
      expect(version.subresources).toEqual({ status: {} });
      expect(crd.spec.names.shortNames.length).toBeGreaterThan(0);
      expect(version.additionalPrinterColumns.at(-1)).toMatchObject({ name: 'Age', type: 'date' });
    },
  );

  it('carries the immutability rules as CEL on the fields', () => {
    const listener = openApiSchema(CUSTOM_RESOURCES[0]!.spec) as Schema;
    for (const field of ['compute_type', 'compute_id']) {
      expect(listener.properties?.[field]?.['x-kubernetes-validations']).toEqual([
        {
          rule: 'self == oldSelf',
          message: `${field} is immutable`,
          reason: 'FieldValueForbidden',
        },
      ]);
    }
    const deployment = openApiSchema(CUSTOM_RESOURCES[1]!.spec) as Schema;
    const placement = deployment.properties?.source_config?.properties;
    expect(placement?.listener_id?.['x-kubernetes-validations']).toHaveLength(1);
    expect(placement?.listener_config?.['x-kubernetes-validations']).toHaveLength(1);
    expect(deployment.properties?.name?.['x-kubernetes-validations']).toHaveLength(1);
    expect(deployment.properties?.source?.['x-kubernetes-validations']).toHaveLength(1);
    const revision = openApiSchema(AgentRevisionSpec) as Schema;
    expect(revision['x-kubernetes-validations']).toEqual([
      expect.objectContaining({ rule: 'self == oldSelf' }),
    ]);
  });

  it('turns free-form objects into preserved unknown fields and drops format regexes', () => {
    const schema = openApiSchema(
      z.object({ anything: z.unknown(), obj: z.record(z.string(), z.unknown()), id: z.uuid() }),
    ) as Schema;
    expect(schema.properties?.anything).toEqual({ 'x-kubernetes-preserve-unknown-fields': true });
    expect(schema.properties?.obj).toEqual({
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
    });
    expect(schema.properties?.id).toEqual({ type: 'string', format: 'uuid' });
  });

  it('metadata for immutable fields does not change what zod accepts', () => {
    expect(z.string().meta(immutable('x')).parse('a')).toBe('a');
  });
});

describe('listenerResourceName', () => {
  const ws = '3f2b6a3e-8a0e-4b8e-9d3e-0a1b2c3d4e5f';
  it('is the same for the same workspace and compute id, and a valid DNS name', () => {
    const name = listenerResourceName(ws, 'Cluster_A');
    expect(name).toBe(listenerResourceName(ws, 'Cluster_A'));
    expect(name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    expect(name.length).toBeLessThanOrEqual(63);
  });
  it('differs between compute ids and between workspaces', () => {
    const other = '9f2b6a3e-8a0e-4b8e-9d3e-0a1b2c3d4e5f';
    expect(listenerResourceName(ws, 'a')).not.toBe(listenerResourceName(ws, 'b'));
    expect(listenerResourceName(ws, 'a')).not.toBe(listenerResourceName(other, 'a'));
  });
});
