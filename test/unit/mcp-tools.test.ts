// Assistants as MCP tools: names made valid for MCP and input schemas simplified for a model,
// the way the official server does it.
import { describe, expect, it } from 'vitest';
import { toolInputSchema, toolName, uniqueByToolName } from '../../runtime/mcp/index.js';

describe('toolName', () => {
  it('turns whitespace runs into one underscore and drops what MCP names cannot hold', () => {
    expect(toolName('  My  helpful\tagent! ')).toBe('My_helpful_agent');
    expect(toolName('v1.2-beta_x')).toBe('v1.2-beta_x');
    expect(toolName('é'.repeat(3) + 'a'.repeat(200))).toHaveLength(128);
  });
});

describe('uniqueByToolName', () => {
  it('lists neither a second assistant of the same tool name nor one whose name leaves none', () => {
    const a = (assistant_id: string, name: string) => ({ assistant_id, name });
    const { kept, dropped } = uniqueByToolName([
      a('1', 'helper'),
      a('2', ''),
      a('3', '助手'),
      a('4', 'helper'),
      a('5', 'other one'),
    ]);
    expect(kept.map((k) => [k.assistant.assistant_id, k.name])).toEqual([
      ['1', 'helper'],
      ['5', 'other_one'],
    ]);
    expect(dropped.map((d) => d.assistant_id)).toEqual(['2', '3', '4']);
  });
});

describe('toolInputSchema', () => {
  it('asks for a message list as one string and drops the LangChain definitions', () => {
    const schema = toolInputSchema({
      type: 'object',
      properties: {
        messages: {
          type: 'array',
          title: 'Messages',
          items: { oneOf: [{ $ref: '#/$defs/HumanMessage' }, { $ref: '#/$defs/AIMessage' }] },
        },
        topic: { type: 'string' },
      },
      $defs: { HumanMessage: {}, AIMessage: {}, ToolCall: {}, Mine: { type: 'string' } },
    });
    expect(schema).toEqual({
      type: 'object',
      properties: {
        messages: {
          type: 'string',
          title: 'Messages',
          description: 'The user message to send to the agent.',
        },
        topic: { type: 'string' },
      },
      $defs: { Mine: { type: 'string' } },
    });
  });

  it('does the same for messages described inline, and defaults to an object', () => {
    const inline = {
      type: 'array',
      items: { type: 'object', properties: { type: {}, content: {} }, required: ['content'] },
    };
    expect(toolInputSchema({ properties: { messages: inline } })).toEqual({
      type: 'object',
      properties: {
        messages: {
          type: 'string',
          title: 'messages',
          description: 'The user message to send to the agent.',
        },
      },
    });
    expect(toolInputSchema(null)).toEqual({ type: 'object' });
  });

  it('does the same for messages read from TypeScript types, dropping only their definitions', () => {
    const message = 'BaseMessage<MessageStructure<MessageToolSet>,MessageType>';
    const schema = toolInputSchema({
      type: 'object',
      properties: {
        messages: { type: 'array', items: { $ref: `#/definitions/${message}` } },
        meta: { $ref: '#/definitions/Record<string,unknown>' },
      },
      definitions: {
        [message]: { oneOf: [{ $ref: '#/definitions/RemoveMessage' }] },
        RemoveMessage: { properties: { extra: { $ref: '#/definitions/Record<string,unknown>' } } },
        'Record<string,unknown>': { type: 'object' },
        Unused: { type: 'string' },
      },
      $schema: 'http://json-schema.org/draft-07/schema#',
    });
    expect(schema).toEqual({
      type: 'object',
      properties: {
        messages: {
          type: 'string',
          title: 'messages',
          description: 'The user message to send to the agent.',
        },
        meta: { $ref: '#/definitions/Record<string,unknown>' },
      },
      definitions: { 'Record<string,unknown>': { type: 'object' }, Unused: { type: 'string' } },
      $schema: 'http://json-schema.org/draft-07/schema#',
    });
  });
});
