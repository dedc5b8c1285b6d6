// The tracer's own cost, without HTTP, PostgreSQL or a load generator: the example agent graph
// run in this one process, untraced and traced (the runtime's RuntimeTracing, sending to a stub
// endpoint in a child process), in alternating batches; CPU ms per agent run of this process.
// A third kind of batch hands LangChain a callback handler that does nothing: what any tracer
// costs before its own work, since LangChain.js reaches a tracer only through its callbacks.
// Runs under the image's Node.js, as production does.
//
//   npx tsx bench/traces/inproc.ts [--runs 200] [--rounds 3]
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import type { Callbacks } from '@langchain/core/callbacks/manager';
import { Registry } from 'prom-client';
import { graph } from '../../examples/graphs/agent.js';
import { createLogger } from '../../common/logging/index.js';
import { rerunUnderImageNode } from '../../scripts/image-node.js';
import { RuntimeTracing } from '../../traces/index.js';

rerunUnderImageNode();
const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '3' },
  },
});

// As bench/traces' --sink: JSON batches of up to 1,000 operations, answered 202 at once.
const SINK = `
const info = JSON.stringify({ version: 'sink', batch_ingest_config: { use_multipart_endpoint: false,
  size_limit: 1000, size_limit_bytes: 20971520 }, instance_flags: { gzip_body_enabled: true } });
const server = require('node:http').createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const isInfo = req.url.endsWith('/info');
    res.writeHead(isInfo ? 200 : 202, { 'content-type': 'application/json' });
    res.end(isInfo ? info : '{}');
  });
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));`;
const sink = spawn(process.execPath, ['-e', SINK], { stdio: ['ignore', 'pipe', 'inherit'] });
const port = await new Promise<string>((resolve) =>
  sink.stdout.once('data', (d: Buffer) => resolve(d.toString().trim())),
);
const tracing = new RuntimeTracing(
  {
    endpoint: `http://127.0.0.1:${port}/api/v1`,
    apiKey: 'k',
    project: 'bench',
    source: 'graphdock',
  },
  new Registry(),
  createLogger({ level: 'warn' }),
);

/** A handler with no method of its own: LangChain still builds and calls its managers for it. */
class IdleHandler extends BaseCallbackHandler {
  name = 'idle_handler';
}

type Mode = 'off' | 'noop' | 'on';

/** The callbacks of one run in each mode. */
function callbacksFor(mode: Mode): { callbacks?: Callbacks } {
  if (mode === 'on') return { callbacks: tracing.callbacks() };
  if (mode === 'noop') return { callbacks: [new IdleHandler()] };
  return {};
}

/** One agent run with the options the executor gives a threadless run. */
async function agentRun(mode: Mode) {
  const runId = crypto.randomUUID();
  const ids = {
    thread_id: crypto.randomUUID(),
    run_id: runId,
    graph_id: 'agent',
    assistant_id: crypto.randomUUID(),
  };
  const stream = await graph.stream(
    { messages: [{ role: 'user', content: 'add 2 and 3' }] },
    {
      configurable: { ...ids },
      metadata: { ...ids },
      ...callbacksFor(mode),
      ...(mode === 'off' ? {} : { runId }),
      streamMode: ['values'],
    },
  );
  for await (const chunk of stream) void chunk;
}

/** CPU ms per agent run over `runs` runs, the traced ones' sending included. */
async function batch(mode: Mode, runs: number) {
  const before = process.cpuUsage();
  for (let i = 0; i < runs; i++) await agentRun(mode);
  await tracing.flush(30_000);
  const used = process.cpuUsage(before);
  return Number(((used.user + used.system) / 1000 / runs).toFixed(2));
}

const runs = Number(values.runs);
const modes: Mode[] = ['off', 'noop', 'on'];
for (const mode of modes) await batch(mode, runs);
const ms: Record<Mode, number[]> = { off: [], noop: [], on: [] };
for (let r = 0; r < Number(values.rounds); r++)
  for (const mode of modes) ms[mode].push(await batch(mode, runs));
const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
console.log(JSON.stringify({ node: process.version, cpuMsPerAgentRun: ms, load }));
sink.kill();
