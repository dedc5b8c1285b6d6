// Starts the official in-memory LangGraph API server (`@langchain/langgraph-api`) for the
// benchmark in bench/http. The server options arrive as JSON in the last argument, which is also
// where the package's preload hook (graph/load.hooks via dist/preload.mjs) looks for them.
// Storage goes to `<cwd>/.langgraph_api/`; the runner passes a throw-away cwd.
import { startServer } from '@langchain/langgraph-api/server';

const options = JSON.parse(process.argv.at(-1) ?? '{}') as Parameters<typeof startServer>[0];
const { host } = await startServer(options);
process.stdout.write(`baseline listening on ${host}\n`);
