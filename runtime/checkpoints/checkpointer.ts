// The official Postgres checkpointer, plus one addition: metadata the server wants recorded on a
// checkpoint (graph_id, the writes of a state update, later run ids) rides in a private
// configurable key, because LangGraph JS copies only `thread_id` from the config.
import type { RunnableConfig } from '@langchain/core/runnables';
import type {
  ChannelVersions,
  Checkpoint,
  CheckpointMetadata,
} from '@langchain/langgraph-checkpoint';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';

export const CHECKPOINT_METADATA_KEY = '__graphdock_checkpoint_metadata';

export class GraphdockCheckpointer extends PostgresSaver {
  override put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const extra = config.configurable?.[CHECKPOINT_METADATA_KEY] as
      Record<string, unknown> | undefined;
    return super.put(config, checkpoint, extra ? { ...metadata, ...extra } : metadata, newVersions);
  }
}
