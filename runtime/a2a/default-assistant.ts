// Which assistant `GET /.well-known/agent-card.json` describes when no `assistant_id` is given:
// A2A clients that know only a server's base URL look for the card there.
import { ConfigError } from '../../common/config/index.js';
import { AppError } from '../../common/errors/index.js';

export const DEFAULT_ASSISTANT_SETTING = 'GRAPHDOCK_A2A_DEFAULT_ASSISTANT';

/** The assistant (UUID or graph id) to describe, or why there is none and how to choose one. */
export type DefaultAssistant = { assistantId: string } | { missing: string };

/**
 * The configured assistant, else the only graph's. A configured one must exist at start-up (a
 * setting the server accepts has to work); several graphs and no setting leave no default.
 */
export async function resolveDefaultAssistant(
  setting: string | undefined,
  graphIds: string[],
  find: (idOrGraph: string) => Promise<unknown>,
): Promise<DefaultAssistant> {
  if (setting !== undefined) {
    try {
      await find(setting);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      throw new ConfigError(
        `${DEFAULT_ASSISTANT_SETTING}="${setting}" names no assistant: use an assistant UUID or one of the graph ids (${graphIds.join(', ')})`,
      );
    }
    return { assistantId: setting };
  }
  const [only] = graphIds;
  if (graphIds.length === 1 && only !== undefined) return { assistantId: only };
  return {
    missing:
      `Missing query parameter assistant_id: this server has ${graphIds.length} graphs ` +
      `(${graphIds.join(', ')}) and no default A2A assistant. Pass ?assistant_id=<assistant UUID or graph id>, ` +
      `or set ${DEFAULT_ASSISTANT_SETTING} on the server.`,
  };
}
