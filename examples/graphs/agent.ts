// A tool-calling agent: model -> tools -> model, with a zod state schema so the server can
// publish real JSON Schemas for it.
import { tool } from '@langchain/core/tools';
import { END, MessagesZodState, START, StateGraph } from '@langchain/langgraph';
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import { z } from 'zod';
import { DeterministicChatModel } from './fake-chat-model.js';

const add = tool(({ a, b }) => String(a + b), {
  name: 'add',
  description: 'Adds two numbers',
  schema: z.object({ a: z.number(), b: z.number() }),
});

const model = new DeterministicChatModel({}).bindTools([add]);

export const graph = new StateGraph(MessagesZodState)
  .addNode('model', async (state) => ({ messages: [await model.invoke(state.messages)] }))
  .addNode('tools', new ToolNode([add]))
  .addEdge(START, 'model')
  .addConditionalEdges('model', toolsCondition, ['tools', END])
  .addEdge('tools', 'model')
  .compile();
