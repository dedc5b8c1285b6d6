// CustomResourceDefinitions built from the zod schemas: the schemas that validate API input also
// become the structural OpenAPI v3 schemas the API server enforces.
import { z } from 'zod';
import { GROUP, VERSION, type ResourceKind } from './meta.js';

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  priority?: number;
}

export interface CustomResourceSource {
  kind: ResourceKind;
  spec: z.ZodType;
  status: z.ZodType;
  printerColumns: PrinterColumn[];
}

type JsonSchema = Record<string, unknown>;

/** Formats the API server validates; others become plain strings. */
const KUBE_FORMATS = new Set(['uuid', 'date-time', 'date', 'int32', 'int64', 'byte']);
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/**
 * Rewrites zod's OpenAPI 3.0 output into a structural schema: no `additionalProperties: false`,
 * free-form objects keep their unknown fields, formats carry no regex copies, and no defaults
 * (the API writes complete objects; defaults would make stored specs differ from what it wrote).
 */
export function toStructural(node: unknown): JsonSchema {
  if (typeof node !== 'object' || node === null) return {};
  const input = node as JsonSchema;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(input)) {
    switch (key) {
      case '$schema':
      case 'default':
      case 'id':
        break;
      case 'properties':
        out.properties = Object.fromEntries(
          Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, toStructural(v)]),
        );
        break;
      case 'items':
        out.items = toStructural(value);
        break;
      case 'additionalProperties':
        if (value === false) break;
        if (isFreeForm(value)) out['x-kubernetes-preserve-unknown-fields'] = true;
        else out.additionalProperties = toStructural(value);
        break;
      case 'pattern':
        if (typeof input.format === 'string' && KUBE_FORMATS.has(input.format)) break;
        out.pattern = value;
        break;
      case 'format':
        if (typeof value === 'string' && KUBE_FORMATS.has(value)) out.format = value;
        break;
      case 'maximum':
        if (value !== MAX_SAFE) out.maximum = value;
        break;
      case 'minimum':
        if (value !== -MAX_SAFE) out.minimum = value;
        break;
      default:
        out[key] = value;
    }
  }
  if (isFreeForm(input)) return { 'x-kubernetes-preserve-unknown-fields': true };
  return out;
}

function isFreeForm(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.keys(value).length === 0;
}

export function openApiSchema(schema: z.ZodType): JsonSchema {
  return toStructural(
    z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input', unrepresentable: 'any' }),
  );
}

export function buildCrd(source: CustomResourceSource) {
  const { kind } = source;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${kind.plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: kind.scope,
      names: {
        kind: kind.kind,
        listKind: `${kind.kind}List`,
        plural: kind.plural,
        singular: kind.singular,
        shortNames: kind.shortNames,
        categories: ['graphdock'],
      },
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: source.printerColumns,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              required: ['spec'],
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: openApiSchema(source.spec),
                status: openApiSchema(source.status),
              },
            },
          },
        },
      ],
    },
  };
}
