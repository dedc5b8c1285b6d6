// The benchmark graph: one node writes `events` custom events (100 by default) and returns, with
// no model call and no timer, so a run's stream is as dense as the transport can carry.
import {
  Annotation,
  END,
  START,
  StateGraph,
  type LangGraphRunnableConfig,
} from '@langchain/langgraph';

export const graph = new StateGraph(
  Annotation.Root({
    events: Annotation<number>({ reducer: (_, n) => n, default: () => 100 }),
    written: Annotation<number>({ reducer: (_, n) => n, default: () => 0 }),
  }),
)
  .addNode('emit', (state, config: LangGraphRunnableConfig) => {
    for (let i = 0; i < state.events; i++) config.writer?.({ i });
    return { written: state.events };
  })
  .addEdge(START, 'emit')
  .addEdge('emit', END)
  .compile();
