// Runs before `npm test`: installs the locked dependencies when node_modules is missing or older
// than package-lock.json, so `npm test` works on a fresh clone (CI) with no other step.
import { execSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const lock = readFileSync('package-lock.json');
const digest = createHash('sha256').update(lock).digest('hex');
const marker = 'node_modules/.graphdock-lock-sha256';
const current = existsSync(marker) ? readFileSync(marker, 'utf8').trim() : '';
if (process.argv.includes('--mark')) {
  // Called from `postinstall`: the tree was just installed from this lockfile.
  writeFileSync(marker, digest);
} else if (current !== digest) {
  console.log('Installing locked dependencies (npm ci)...');
  execSync('npm ci --no-audit --no-fund', { stdio: 'inherit' });
  writeFileSync(marker, digest);
}
