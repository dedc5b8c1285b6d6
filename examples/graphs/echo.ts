// Replies with the text of the last message. No model, no network.
import { AIMessage } from '@langchain/core/messages';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part: unknown) =>
        typeof part === 'object' && part !== null && 'text' in part ? String(part.text) : '',
      )
      .join('');
  }
  return JSON.stringify(content);
}

export const graph = new StateGraph(MessagesAnnotation)
  .addNode('echo', (state) => {
    const last = state.messages.at(-1);
    return { messages: [new AIMessage({ content: `echo: ${textOf(last?.content)}` })] };
  })
  .addEdge(START, 'echo')
  .addEdge('echo', END)
  .compile();
