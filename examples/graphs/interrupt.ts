// Stops at `interrupt()` to ask a human for approval; a run with `command.resume` continues it.
import { AIMessage } from '@langchain/core/messages';
import {
  Annotation,
  END,
  MessagesAnnotation,
  START,
  StateGraph,
  interrupt,
} from '@langchain/langgraph';

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  approved: Annotation<boolean | null>({ reducer: (_, next) => next, default: () => null }),
});

export const graph = new StateGraph(State)
  .addNode('draft', () => ({ messages: [new AIMessage({ content: 'Draft ready for review.' })] }))
  .addNode('review', () => {
    const answer = interrupt<{ question: string }, string>({ question: 'Approve the draft?' });
    return {
      approved: answer === 'yes',
      messages: [new AIMessage({ content: `Review: ${answer}` })],
    };
  })
  .addEdge(START, 'draft')
  .addEdge('draft', 'review')
  .addEdge('review', END)
  .compile();
