// The store as graphs see it: a LangGraph `BaseStore` over the same tables the HTTP API serves,
// so `getStore()` / `config.store` inside a node reads and writes what `client.store` sees.
import {
  BaseStore,
  type GetOperation,
  type Item,
  type ListNamespacesOperation,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
} from '@langchain/langgraph-checkpoint';
import type { StoreService } from './service.js';
import type { ItemRow } from './store.js';

function toItem(row: ItemRow): Item {
  return {
    namespace: row.namespace,
    key: row.key,
    value: row.value,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

const isPut = (op: Operation): op is PutOperation => 'value' in op;
const isGet = (op: Operation): op is GetOperation => 'key' in op && !('value' in op);
const isSearch = (op: Operation): op is SearchOperation => 'namespacePrefix' in op;

export class GraphdockStore extends BaseStore {
  constructor(private readonly service: StoreService) {
    super();
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const results: unknown[] = [];
    // In order: a put followed by a get in the same batch must see the put.
    for (const op of operations) results.push(await this.apply(op));
    return results as OperationResults<Op>;
  }

  private async apply(op: Operation): Promise<unknown> {
    if (isPut(op)) {
      if (op.value === null) return this.service.delete(op.namespace, op.key);
      return this.service.put(op.namespace, op.key, op.value, { index: op.index });
    }
    if (isGet(op)) {
      const row = await this.service.get(op.namespace, op.key);
      return row ? toItem(row) : null;
    }
    if (isSearch(op)) {
      const rows = await this.service.search(op.namespacePrefix, {
        filter: op.filter,
        limit: op.limit,
        offset: op.offset,
        query: op.query,
      });
      return rows.map((row): SearchItem => {
        const item: SearchItem = toItem(row);
        if (op.query) item.score = row.score ?? undefined;
        return item;
      });
    }
    return this.namespaces(op);
  }

  private namespaces(op: ListNamespacesOperation): Promise<string[][]> {
    const condition = (type: 'prefix' | 'suffix') =>
      op.matchConditions?.find((c) => c.matchType === type)?.path;
    return this.service.listNamespaces({
      prefix: condition('prefix'),
      suffix: condition('suffix'),
      maxDepth: op.maxDepth,
      limit: op.limit,
      offset: op.offset,
    });
  }
}
