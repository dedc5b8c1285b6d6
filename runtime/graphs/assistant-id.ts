import { v5 as uuidv5 } from 'uuid';

/** The namespace the official servers use for system assistant ids (not the RFC URL namespace). */
const GRAPH_NAMESPACE = '6ba7b821-9dad-11d1-80b4-00c04fd430c8';

export function systemAssistantId(graphId: string): string {
  return uuidv5(graphId, GRAPH_NAMESPACE);
}
