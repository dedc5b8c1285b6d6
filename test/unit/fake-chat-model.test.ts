// The examples' chat model must treat list content (what browser clients such as Agent Chat UI
// send) exactly as a plain string.
import { HumanMessage, type AIMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { DeterministicChatModel } from '../../examples/graphs/fake-chat-model.js';

const asString = new HumanMessage({ content: 'hello there' });
const asBlocks = new HumanMessage({ content: [{ type: 'text', text: 'hello there' }] });

describe('DeterministicChatModel', () => {
  it('echoes text blocks as it echoes a string', async () => {
    const model = new DeterministicChatModel({});
    const fromString = await model.invoke([asString]);
    const fromBlocks = await model.invoke([asBlocks]);
    expect(fromString.text).toBe('You said: hello there');
    expect(fromBlocks.text).toBe(fromString.text);
  });

  it('finds the numbers of a tool call in text blocks', async () => {
    const add = { name: 'add', description: 'adds', schema: {} };
    const model = new DeterministicChatModel({}).bindTools([add]);
    const blocks = new HumanMessage({
      content: [
        { type: 'text', text: 'what is 2' },
        { type: 'text', text: ' plus 40?' },
      ],
    });
    const reply = (await model.invoke([blocks])) as AIMessage;
    expect(reply).toMatchObject({ tool_calls: [{ name: 'add', args: { a: 2, b: 40 } }] });
  });

  it('streams the same answer for text blocks', async () => {
    const model = new DeterministicChatModel({});
    let streamed = '';
    for await (const chunk of await model.stream([asBlocks])) streamed += chunk.text;
    expect(streamed).toBe('You said: hello there');
  });
});
