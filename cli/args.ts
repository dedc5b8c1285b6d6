// Command-line mistakes (an unknown flag, a flag without its value) end with one line, not a
// stack trace: node's parseArgs reports them as TypeErrors with an ERR_PARSE_ARGS_* code.
export function isArgumentError(err: unknown): err is TypeError {
  const code = (err as { code?: unknown } | undefined)?.code;
  return err instanceof TypeError && typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS');
}

/** The mistake in one line: node's text for an unknown flag goes on about positionals. */
export function argumentErrorMessage(err: TypeError): string {
  const unknown = /^Unknown option '([^']+)'/.exec(err.message);
  return unknown ? `unknown option '${unknown[1]}'` : (err.message.split('\n')[0] ?? err.message);
}
