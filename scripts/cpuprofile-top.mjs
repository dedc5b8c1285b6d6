// Summarises a V8 `.cpuprofile` (from `node --cpu-prof`): the functions with the most self time,
// and the share of samples spent under each package (by the path of the sampled frame).
//
//   node scripts/cpuprofile-top.mjs <file.cpuprofile> [--top 40]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '40' } },
});
const file = positionals[0];
if (!file) {
  console.error('usage: node scripts/cpuprofile-top.mjs <file.cpuprofile> [--top 40]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const selfHits = new Map();
for (const id of profile.samples) selfHits.set(id, (selfHits.get(id) ?? 0) + 1);
const total = profile.samples.length;

/** Where a frame's code lives: a package name, a project folder, or a V8/Node category. */
function owner(url) {
  if (!url) return '(native/vm)';
  const pkg = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (pkg) return pkg[1];
  if (url.startsWith('node:')) return 'node:internal';
  const local = url.match(/\/work\/[^/]+\/([^/]+)\//);
  return local ? `project:${local[1]}` : url;
}

const functions = new Map();
const owners = new Map();
for (const [id, hits] of selfHits) {
  const { callFrame } = byId.get(id);
  const name = `${callFrame.functionName || '(anonymous)'} ${callFrame.url.split('/').slice(-2).join('/')}:${callFrame.lineNumber + 1}`;
  functions.set(name, (functions.get(name) ?? 0) + hits);
  const who = owner(callFrame.url);
  owners.set(who, (owners.get(who) ?? 0) + hits);
}
const pct = (n) => `${((100 * n) / total).toFixed(1).padStart(5)}%`;
console.log(`${total} samples`);
console.log('\nself time by owner');
for (const [who, hits] of [...owners].sort((a, b) => b[1] - a[1]).slice(0, 25))
  console.log(`${pct(hits)}  ${who}`);
console.log('\nself time by function');
for (const [name, hits] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, Number(values.top)))
  console.log(`${pct(hits)}  ${name}`);
