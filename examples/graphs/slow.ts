// Appends one message per step with a pause between steps: long enough to test multitask
// strategies, cancellation and streaming against a run that is still going.
import { AIMessage } from '@langchain/core/messages';
import { Annotation, END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';

const State = Annotation.Root({ ...MessagesAnnotation.spec });

function step(name: string, ms: number) {
  return async (state: typeof State.State, config: { signal?: AbortSignal }) => {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, ms);
      config.signal?.addEventListener('abort', () => {
        clearTimeout(timer);
        reject(new Error('aborted'));
      });
    });
    const last = state.messages.at(-1);
    return { messages: [new AIMessage({ content: `${name}: ${last?.text ?? ''}` })] };
  };
}

const delay = Number(process.env.GRAPHDOCK_SLOW_STEP_MS ?? 300);

export const graph = new StateGraph(State)
  .addNode('first', step('first', delay))
  .addNode('second', step('second', delay))
  .addEdge(START, 'first')
  .addEdge('first', 'second')
  .addEdge('second', END)
  .compile();
