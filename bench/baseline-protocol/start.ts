// Starts the official in-memory LangGraph API server at 1.5.1, the version that serves the thread
// protocol (2.0.0 in bench/baseline does not), for bench/protocol; as bench/baseline/start.ts,
// the options arrive as JSON in the last argument, where the package's preload hook reads them.
import { startServer } from '@langchain/langgraph-api/server';

const options = JSON.parse(process.argv.at(-1) ?? '{}') as Parameters<typeof startServer>[0];
const { host } = await startServer(options);
process.stdout.write(`baseline listening on ${host}\n`);
