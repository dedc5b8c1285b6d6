// Entry of `graphdock operator` that avoids loading the runtime (see bin/graphdock.mjs).
import { ConfigError } from '../common/config/index.js';
import { runOperator } from './operator-commands.js';
import { PortInUseError } from './port.js';

export async function main(argv: string[]): Promise<number> {
  try {
    return await runOperator(argv.slice(1));
  } catch (err) {
    if (err instanceof PortInUseError) {
      process.stderr.write(`graphdock: ${err.message}\n`);
      return 1;
    }
    // parseArgs reports unknown or malformed flags as TypeErrors with an ERR_PARSE_ARGS_* code.
    if (err instanceof ConfigError || (err instanceof TypeError && 'code' in err)) {
      process.stderr.write(`graphdock: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
}
