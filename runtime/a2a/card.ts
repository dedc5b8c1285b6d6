// The agent card (A2A 0.3): one per assistant, named and described by the assistant itself.

const MODES = ['text/plain', 'application/json'];

export interface CardAssistant {
  assistant_id: string;
  name: string;
  description: string | null;
}

export function agentCard(assistant: CardAssistant, endpointUrl: string, version: string) {
  const description = assistant.description ?? `${assistant.name} assistant`;
  return {
    protocolVersion: '0.3.0',
    name: assistant.name,
    description,
    url: endpointUrl,
    preferredTransport: 'JSONRPC',
    additionalInterfaces: [{ url: endpointUrl, transport: 'JSONRPC' }],
    version,
    capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
    defaultInputModes: MODES,
    defaultOutputModes: MODES,
    skills: [
      {
        id: `${assistant.assistant_id}-main`,
        name: `${assistant.name} Capabilities`,
        description,
        tags: ['assistant', 'langgraph'],
        examples: [],
        inputModes: MODES,
        outputModes: MODES,
      },
    ],
    supportsAuthenticatedExtendedCard: false,
  };
}
