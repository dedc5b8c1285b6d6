// The A2A 0.3 objects this endpoint answers with (the protocol's own field names).

export type TaskState =
  | 'submitted'
  | 'working'
  | 'input-required'
  | 'completed'
  | 'canceled'
  | 'failed'
  | 'rejected'
  | 'auth-required'
  | 'unknown';

export type OutPart =
  { kind: 'text'; text: string } | { kind: 'data'; data: Record<string, unknown> };

export interface A2aMessage {
  kind: 'message';
  role: 'user' | 'agent';
  parts: OutPart[];
  messageId: string;
  taskId: string;
  contextId: string;
}

export interface TaskStatus {
  state: TaskState;
  message?: A2aMessage;
  timestamp: string;
}

export interface Artifact {
  artifactId: string;
  name: string;
  description: string;
  parts: OutPart[];
}

export interface Task {
  kind: 'task';
  id: string;
  contextId: string;
  status: TaskStatus;
  history: A2aMessage[];
  artifacts?: Artifact[];
  metadata: Record<string, unknown>;
}

export interface TaskStatusUpdateEvent {
  kind: 'status-update';
  taskId: string;
  contextId: string;
  status: TaskStatus;
  final: boolean;
}

export interface TaskArtifactUpdateEvent {
  kind: 'artifact-update';
  taskId: string;
  contextId: string;
  artifact: Artifact;
  append: boolean;
  lastChunk: boolean;
}

export type StreamResult = Task | TaskStatusUpdateEvent | TaskArtifactUpdateEvent;
