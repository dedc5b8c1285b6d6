// A graph with a subgraph and a node that writes its own progress events: shows subgraph
// namespaces (`updates|inner:<task id>`) and the `custom` stream mode.
import { AIMessage } from '@langchain/core/messages';
import {
  END,
  type LangGraphRunnableConfig,
  MessagesAnnotation,
  START,
  StateGraph,
} from '@langchain/langgraph';

const inner = new StateGraph(MessagesAnnotation)
  .addNode('think', (state) => ({
    messages: [new AIMessage({ content: `thought about ${state.messages.length} messages` })],
  }))
  .addEdge(START, 'think')
  .addEdge('think', END)
  .compile();

export const graph = new StateGraph(MessagesAnnotation)
  .addNode('progress', (_state, config: LangGraphRunnableConfig) => {
    config.writer?.({ progress: 50 });
    config.writer?.({ progress: 100 });
    return {};
  })
  .addNode('inner', inner)
  .addEdge(START, 'progress')
  .addEdge('progress', 'inner')
  .addEdge('inner', END)
  .compile();
