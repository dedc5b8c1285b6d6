// Entry of `graphdock operator` that avoids loading the runtime (see bin/graphdock.mjs).
import { ConfigError } from '../common/config/index.js';
import { runOperator } from './operator-commands.js';
import { argumentErrorMessage, isArgumentError } from './args.js';
import { ListenError } from './port.js';

export async function main(argv: string[]): Promise<number> {
  try {
    return await runOperator(argv.slice(1));
  } catch (err) {
    if (err instanceof ListenError) {
      process.stderr.write(`graphdock: ${err.message}\n`);
      return 1;
    }
    if (isArgumentError(err)) {
      process.stderr.write(`graphdock: ${argumentErrorMessage(err)}\n`);
      return 2;
    }
    if (err instanceof ConfigError) {
      process.stderr.write(`graphdock: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
}
