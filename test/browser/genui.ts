// The page of the generative UI test: a chat on the SDK's React `useStream` that folds the `ui`
// events of the run (custom stream mode) into its values, as the official examples do, and
// renders each with `LoadExternalComponent`, which fetches the component's bundle from the
// server. It provides the package the project lists in `ui_config.shared`. The test drives it
// through `window.graphdockUi`.
import { useStream } from '@langchain/langgraph-sdk/react';
import {
  experimental_loadShare,
  LoadExternalComponent,
  uiMessageReducer,
  type UIMessage,
} from '@langchain/langgraph-sdk/react-ui';
import { createElement } from 'react';
import { createRoot } from 'react-dom/client';

interface State extends Record<string, unknown> {
  messages: { type: string; content: unknown }[];
  ui?: UIMessage[];
}
type Chat = ReturnType<typeof useStream<State>>;

interface PageApi {
  chat?: Chat;
  /** Every custom event the run streamed, in order. */
  customEvents: unknown[];
  mount(options: { apiUrl: string; apiKey: string; assistantId: string }): void;
}

declare global {
  interface Window {
    graphdockUi: PageApi;
  }
}

experimental_loadShare('@graphdock-test/units', {
  fahrenheit: (celsius: number) => Math.round((celsius * 9) / 5 + 32),
});

const api: PageApi = {
  customEvents: [],
  mount(options) {
    root.render(createElement(GenUiChat, options));
  },
};
window.graphdockUi = api;

function GenUiChat(props: { apiUrl: string; apiKey: string; assistantId: string }) {
  const chat = useStream<State>({
    apiUrl: props.apiUrl,
    apiKey: props.apiKey,
    assistantId: props.assistantId,
    onCustomEvent: (event, options) => {
      api.customEvents.push(event);
      options.mutate((prev) => ({
        ui: uiMessageReducer(prev.ui ?? [], event as Parameters<typeof uiMessageReducer>[1]),
      }));
    },
  });
  api.chat = chat;
  return createElement(
    'div',
    null,
    (chat.values.ui ?? []).map((message) =>
      createElement(LoadExternalComponent, {
        key: message.id,
        stream: chat,
        message,
        fallback: createElement('span', null, 'loading component'),
        className: `ui-${message.name}`,
      }),
    ),
  );
}

const root = createRoot(document.getElementById('root')!);
