// Builds image archives without a container engine (see images.ts) and prints, per image, one
// JSON line {"archive": ..., "ref": ...}; progress goes to stderr.
//   npx tsx test/cluster/build-image.ts graphdock
//   npx tsx test/cluster/build-image.ts postgres
//   npx tsx test/cluster/build-image.ts project [-c examples/langgraph.json]
// Then: ctr -n k8s.io images import <archive>
import { parseArgs } from 'node:util';
import {
  buildGraphdockImageArchive,
  buildImageArchive,
  buildPostgresImageArchive,
  type ImageArchive,
} from './images.js';

const USAGE = 'Usage: build-image.ts graphdock|postgres|project [-c langgraph.json]\n';
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { config: { type: 'string', short: 'c' } },
});
const log = (line: string) => process.stderr.write(`build-image: ${line}\n`);
const builders: Record<string, () => Promise<ImageArchive>> = {
  graphdock: () => buildGraphdockImageArchive({ log }),
  postgres: () => buildPostgresImageArchive({ log }),
  project: () => buildImageArchive({ config: values.config ?? 'langgraph.json', log }),
};
const build = builders[positionals[0] ?? ''];
if (!build || positionals.length !== 1) {
  process.stderr.write(USAGE);
  process.exit(2);
}
const started = Date.now();
const { archive, ref } = await build();
log(`${ref} ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
process.stdout.write(`${JSON.stringify({ archive, ref })}\n`);
