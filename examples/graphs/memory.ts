// Long-term memory across threads through the runtime's store: "remember <fact>" saves the fact
// under the user's namespace; any message gets back every fact saved for that user. The user is
// `configurable.user_id`, or the `x-user-id` request header the runtime copies into configurable.
import { AIMessage } from '@langchain/core/messages';
import type { LangGraphRunnableConfig } from '@langchain/langgraph';
import { END, MessagesAnnotation, START, StateGraph, getStore } from '@langchain/langgraph';

function userOf(config: LangGraphRunnableConfig): string {
  const configurable = config.configurable ?? {};
  const user: unknown = configurable.user_id ?? configurable['x-user-id'] ?? 'anonymous';
  return String(user);
}

export const graph = new StateGraph(MessagesAnnotation)
  .addNode('remember', async (state, config: LangGraphRunnableConfig) => {
    const store = getStore();
    if (!store) throw new Error('no store: the runtime should have bound one');
    const namespace = ['memories', userOf(config)];
    const content = state.messages.at(-1)?.content;
    const text = typeof content === 'string' ? content : '';
    const fact = /^remember\s+(.+)$/i.exec(text)?.[1];
    if (fact) await store.put(namespace, `fact-${Date.now()}`, { fact });
    const facts = (await store.search(namespace, { limit: 100 })).map((i) => String(i.value.fact));
    facts.sort();
    return {
      messages: [new AIMessage({ content: `I remember: ${facts.join('; ') || 'nothing'}` })],
    };
  })
  .addEdge(START, 'remember')
  .addEdge('remember', END)
  .compile();
