// The page that the browser test loads from its own origin: the official SDK's Client, and a
// chat built on the SDK's React `useStream` configured as Agent Chat UI configures it (history
// fetched, so submits carry the thread head's checkpoint and edits fork). The test drives both
// through `window.graphdock`.
import { Client } from '@langchain/langgraph-sdk';
import { useStream } from '@langchain/langgraph-sdk/react';
import { createElement, useState } from 'react';
import { createRoot } from 'react-dom/client';

type Chat = ReturnType<typeof useStream>;

interface PageApi {
  Client: typeof Client;
  /** The chat hook's latest render; replaced on every render. */
  chat?: Chat;
  threadId: string | null;
  renders: number;
  /** Mounts the chat for one assistant; a later call replaces it (new thread). */
  mountChat(options: { apiUrl: string; apiKey: string; assistantId: string }): void;
}

declare global {
  interface Window {
    graphdock: PageApi;
  }
}

const api: PageApi = {
  Client,
  threadId: null,
  renders: 0,
  mountChat(options) {
    api.chat = undefined;
    api.threadId = null;
    root.render(createElement(ChatView, { ...options, key: String(Date.now()) }));
  },
};
window.graphdock = api;

function ChatView(props: { apiUrl: string; apiKey: string; assistantId: string }) {
  const [threadId, setThreadId] = useState<string | null>(null);
  const chat = useStream({
    apiUrl: props.apiUrl,
    apiKey: props.apiKey,
    assistantId: props.assistantId,
    threadId,
    onThreadId: (id) => {
      api.threadId = id;
      setThreadId(id);
    },
    fetchStateHistory: true,
  });
  api.chat = chat;
  api.renders += 1;
  return createElement(
    'ul',
    null,
    chat.messages.map((m, i) =>
      createElement('li', { key: m.id ?? i }, `${m.type}: ${JSON.stringify(m.content)}`),
    ),
  );
}

const root = createRoot(document.getElementById('root')!);
