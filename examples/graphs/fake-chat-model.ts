// A deterministic chat model: it asks for a tool call when the user speaks, and answers with the
// tool's result when a tool has replied. It streams its answer word by word like a real model.
import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import { BaseChatModel, type BindToolsInput } from '@langchain/core/language_models/chat_models';
import { AIMessage, AIMessageChunk, type BaseMessage } from '@langchain/core/messages';
import { ChatGenerationChunk, type ChatResult } from '@langchain/core/outputs';
import type { Runnable } from '@langchain/core/runnables';

export class DeterministicChatModel extends BaseChatModel {
  private toolNames: string[] = [];

  _llmType(): string {
    return 'deterministic-fake';
  }

  override bindTools(tools: BindToolsInput[]): Runnable {
    const bound = new DeterministicChatModel({});
    bound.toolNames = tools.map((t) =>
      'name' in t && typeof t.name === 'string' ? t.name : 'tool',
    );
    return bound;
  }

  private reply(messages: BaseMessage[]): AIMessage {
    const last = messages.at(-1);
    const turn = messages.filter((m) => m.getType() === 'human').length;
    if (last?.getType() === 'tool') {
      return new AIMessage({ content: `The answer is ${last.text}.` });
    }
    // `text` joins the text blocks of list content, which browser clients send.
    const text = last?.text ?? '';
    const numbers = text.match(/-?\d+(\.\d+)?/g)?.map(Number) ?? [];
    if (this.toolNames.includes('add') && numbers.length >= 2) {
      return new AIMessage({
        content: '',
        tool_calls: [
          {
            id: `call_${turn}`,
            name: 'add',
            args: { a: numbers[0], b: numbers[1] },
            type: 'tool_call',
          },
        ],
      });
    }
    return new AIMessage({ content: `You said: ${text}` });
  }

  _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const message = this.reply(messages);
    return Promise.resolve({
      generations: [{ message, text: message.text }],
    });
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    _options: this['ParsedCallOptions'],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const message = this.reply(messages);
    if (message.tool_calls?.length) {
      const chunk = new ChatGenerationChunk({
        text: '',
        message: new AIMessageChunk({
          content: '',
          tool_call_chunks: message.tool_calls.map((c, index) => ({
            id: c.id,
            name: c.name,
            args: JSON.stringify(c.args),
            index,
            type: 'tool_call_chunk',
          })),
        }),
      });
      yield chunk;
      return;
    }
    const words = message.text.split(/(?<= )/);
    for (const word of words) {
      const chunk = new ChatGenerationChunk({
        text: word,
        message: new AIMessageChunk({ content: word }),
      });
      yield chunk;
      await runManager?.handleLLMNewToken(word);
    }
  }
}
