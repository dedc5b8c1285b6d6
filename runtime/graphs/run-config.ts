// The `config` an assistant, a run or a cron hands to a graph (LangChain's RunnableConfig), checked
// as the official servers check it: `tags` a list of strings, `recursion_limit` a whole number,
// `configurable` an object; other members pass through to the graph.
import { z } from 'zod';

export const GraphConfig = z
  .looseObject({
    tags: z.array(z.string()).optional(),
    // LangGraph refuses a limit under 1 when the run starts: refused here, before the run exists.
    recursion_limit: z.number().int().min(1).optional(),
    configurable: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'Config' });
export type GraphConfig = z.infer<typeof GraphConfig>;
