import { z } from 'zod';
import { MAX_TTL_MINUTES } from '../../common/limits/index.js';

const JsonObject = z.record(z.string(), z.unknown());

const Label = z
  .string()
  .min(1, 'Namespace labels cannot be empty')
  .refine((label) => !label.includes('.'), "Namespace labels cannot contain periods ('.')");
const Namespace = z.array(Label).min(1, 'Namespace is required');
const Limit = (fallback: number) => z.number().int().min(1).max(1000).default(fallback);
const Offset = z.number().int().min(0).default(0);

export const Item = z
  .object({
    namespace: z.array(z.string()),
    key: z.string(),
    value: JsonObject,
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Item' });

export const SearchItem = Item.extend({ score: z.number().nullable().optional() }).meta({
  id: 'SearchItem',
});

export const StorePut = z.object({
  namespace: Namespace,
  key: z.string().min(1),
  value: JsonObject,
  /** false: not embedded; a list: the fields to embed instead of `store.index.fields`. */
  index: z
    .union([z.literal(false), z.array(z.string().min(1))], {
      error: 'Expected false or a list of the fields to embed',
    })
    .nullish(),
  /** Minutes until the item expires; null never expires; omitted uses `store.ttl.default_ttl`. */
  ttl: z.number().positive().max(MAX_TTL_MINUTES).nullish(),
});

export const StoreGetQuery = z.object({
  // Dot-joined labels, as the SDKs send them; items never live at the root namespace.
  namespace: z
    .string({ error: 'Namespace is required' })
    .refine((ns) => ns.split('.').every((label) => label.length > 0), {
      error: 'Namespace labels cannot be empty',
    }),
  key: z.string().optional(),
  refresh_ttl: z.enum(['true', 'false', '1', '0']).optional(),
});

export const StoreDelete = z.object({ namespace: Namespace, key: z.string().min(1) });

/** A value for equality, or an object of comparison operators such as `{"$gt": 3}`. */
const FilterValue = z.unknown();

export const StoreSearch = z.object({
  namespace_prefix: z.array(Label).default([]),
  filter: z.record(z.string().min(1), FilterValue).nullish(),
  limit: Limit(10),
  offset: Offset,
  query: z.string().nullish(),
  refresh_ttl: z.boolean().nullish(),
});

const Pattern = z.array(z.string().min(1));

export const StoreNamespaces = z.object({
  prefix: Pattern.nullish(),
  suffix: Pattern.nullish(),
  // A PostgreSQL integer in the query.
  max_depth: z
    .number()
    .int()
    .min(1)
    .max(2 ** 31 - 1)
    .nullish(),
  limit: Limit(100),
  offset: Offset,
});

export type StorePutBody = z.infer<typeof StorePut>;
export type StoreSearchBody = z.infer<typeof StoreSearch>;
export type StoreNamespacesBody = z.infer<typeof StoreNamespaces>;
