// The custom resources as the operator reads them from its informers.
import type {
  AgentDeploymentSpec,
  AgentDeploymentStatus,
  AgentRevisionSpec,
  AgentRevisionStatus,
  BulkExportSpec,
  BulkExportStatus,
  ListenerSpec,
  ListenerStatus,
} from '../../common/resources/index.js';

export interface Metadata {
  name: string;
  namespace?: string;
  uid: string;
  generation?: number;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  deletionTimestamp?: string | Date;
}

export interface Resource<Spec, Status> {
  apiVersion: string;
  kind: string;
  metadata: Metadata;
  spec: Spec;
  status?: Status;
}

export type AgentDeployment = Resource<AgentDeploymentSpec, AgentDeploymentStatus>;
export type AgentRevision = Resource<AgentRevisionSpec, AgentRevisionStatus>;
export type Listener = Resource<ListenerSpec, ListenerStatus>;
export type BulkExport = Resource<BulkExportSpec, BulkExportStatus>;
