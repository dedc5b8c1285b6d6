// The SSRF guard: every DNS answer for a webhook host is checked, and the connection goes to
// an address that was checked (the lookup used by the socket is this check), so a DNS answer
// that changes between check and connect (rebinding) cannot redirect the request.
import { promises as dns, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import {
  classifyAddress,
  describeRefusal,
  isAllowedAddress,
  ruleFor,
  type AddressRules,
} from './addresses.js';

/** Resolves a host name to all its addresses. Injectable so tests can fake DNS answers. */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) =>
  dns.lookup(hostname, { all: true, verbatim: true });

/** A destination refused by policy: never retried. */
export class BlockedDestinationError extends Error {
  override name = 'BlockedDestinationError';
  readonly code = 'ERR_WEBHOOK_BLOCKED';
  constructor(
    readonly rule: string,
    reason: string,
  ) {
    super(reason);
  }
}

export class SsrfGuard {
  constructor(
    private readonly rules: AddressRules,
    private readonly resolve: Resolver = systemResolver,
  ) {}

  /** The host's addresses, all of them allowed; throws BlockedDestinationError otherwise. */
  async addresses(hostname: string): Promise<LookupAddress[]> {
    const host = hostname.replace(/^\[|\]$/g, '');
    const answers = isIP(host) ? [{ address: host, family: isIP(host) }] : await this.resolve(host);
    if (!answers.length) throw new Error(`no addresses for ${host}`);
    for (const answer of answers) {
      const verdict = classifyAddress(answer.address);
      if (!isAllowedAddress(verdict, this.rules))
        throw new BlockedDestinationError(ruleFor(verdict), describeRefusal(host, verdict));
    }
    return answers;
  }

  /** A socket lookup that answers only with checked addresses. */
  lookup(): LookupFunction {
    return (hostname, options, callback) => {
      this.addresses(hostname).then(
        (answers) => {
          const wanted = options.family ? answers.filter((a) => a.family === options.family) : [];
          const usable = wanted.length ? wanted : answers;
          if (options.all) callback(null, usable);
          else callback(null, usable[0]?.address ?? '', usable[0]?.family ?? 4);
        },
        (err: NodeJS.ErrnoException) => callback(err, '', 0),
      );
    };
  }
}
