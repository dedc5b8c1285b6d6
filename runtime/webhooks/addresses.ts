// Classifies IP addresses for the SSRF guard. Addresses that embed an IPv4 address (IPv4-mapped,
// IPv4-compatible, NAT64, 6to4) are judged by the address they embed, so no wrapping smuggles a
// loopback or metadata address past the check.
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

export type AddressClass =
  'public' | 'loopback' | 'private' | 'link-local' | 'metadata' | 'multicast' | 'reserved';

export interface AddressVerdict {
  address: string;
  class: AddressClass;
  /** The range that matched, for messages: "127.0.0.0/8", "IPv4-mapped ::ffff:0:0/96 -> ...". */
  range: string;
}

/** Which non-public classes a policy lets through. Metadata, link-local, multicast and reserved never pass. */
export interface AddressRules {
  allowLoopback: boolean;
  allowPrivate: boolean;
}

type Parsed = ipaddr.IPv4 | ipaddr.IPv6;
type Rule = { cidr: string; range: [Parsed, number]; class: AddressClass | 'embedded' };

const rules = (entries: [string, AddressClass | 'embedded'][]): Rule[] =>
  entries.map(([cidr, cls]) => ({ cidr, range: ipaddr.parseCIDR(cidr), class: cls }));

// Cloud metadata endpoints (AWS, ECS, EKS pod identity, Alibaba, AWS IPv6), checked first.
const METADATA = [
  '169.254.169.254',
  '169.254.170.2',
  '169.254.170.23',
  '100.100.100.200',
  'fd00:ec2::254',
  'fd00:ec2::23',
  'fe80::a9fe:a9fe',
].map((a) => ipaddr.parse(a).toString());

const IPV4 = rules([
  ['0.0.0.0/8', 'reserved'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'private'], // CGNAT
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'reserved'],
  ['192.0.2.0/24', 'reserved'],
  ['192.88.99.0/24', 'reserved'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'reserved'],
  ['198.51.100.0/24', 'reserved'],
  ['203.0.113.0/24', 'reserved'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'], // includes 255.255.255.255
]);

const IPV6 = rules([
  ['::/128', 'reserved'],
  ['::1/128', 'loopback'],
  ['::ffff:0:0/96', 'embedded'], // IPv4-mapped
  ['::ffff:0:0:0/96', 'embedded'], // IPv4-translated (RFC 6145)
  ['64:ff9b::/96', 'embedded'], // NAT64 well-known prefix
  ['64:ff9b:1::/48', 'reserved'], // local-use NAT64: the IPv4 part's position is not fixed
  ['::/96', 'embedded'], // IPv4-compatible (deprecated)
  ['100::/64', 'reserved'],
  ['2001::/32', 'reserved'], // Teredo
  ['2001:db8::/32', 'reserved'],
  ['2002::/16', 'embedded'], // 6to4
  ['fc00::/7', 'private'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'reserved'],
  ['ff00::/8', 'multicast'],
]);

function embeddedIPv4(address: ipaddr.IPv6, cidr: string): ipaddr.IPv4 {
  const bytes = address.toByteArray();
  // 6to4 carries the IPv4 address right after the 2002::/16 prefix; the others in the last 32 bits.
  const start = cidr === '2002::/16' ? 2 : 12;
  return new ipaddr.IPv4(bytes.slice(start, start + 4));
}

function classifyParsed(address: Parsed, shown: string): AddressVerdict {
  const text = address.toString();
  if (METADATA.includes(text))
    return { address: shown, class: 'metadata', range: 'cloud metadata endpoint' };
  const table = address.kind() === 'ipv4' ? IPV4 : IPV6;
  for (const rule of table) {
    if (rule.range[0].kind() !== address.kind() || !address.match(rule.range)) continue;
    if (rule.class !== 'embedded') return { address: shown, class: rule.class, range: rule.cidr };
    const inner = embeddedIPv4(address as ipaddr.IPv6, rule.cidr);
    const verdict = classifyParsed(inner, shown);
    return { ...verdict, range: `${rule.cidr} embedding ${inner.toString()} (${verdict.range})` };
  }
  return { address: shown, class: 'public', range: 'public' };
}

/** Classifies an IP literal; throws on anything that is not one. */
export function classifyAddress(address: string): AddressVerdict {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (!isIP(bare)) throw new Error(`not an IP address: ${address}`);
  return classifyParsed(ipaddr.parse(bare), bare);
}

export function isAllowedAddress(verdict: AddressVerdict, rules: AddressRules): boolean {
  if (verdict.class === 'public') return true;
  if (verdict.class === 'loopback') return rules.allowLoopback;
  if (verdict.class === 'private') return rules.allowPrivate;
  return false;
}

/** The langgraph.json rule that governs a class, for refusal messages. */
export function ruleFor(verdict: AddressVerdict): string {
  if (verdict.class === 'loopback') return 'disable_loopback';
  if (verdict.class === 'private') return 'disable_private_ips';
  return 'ssrf';
}

export function describeRefusal(host: string, verdict: AddressVerdict): string {
  const where = host === verdict.address ? host : `${host} resolves to ${verdict.address}, which`;
  const hint =
    verdict.class === 'loopback'
      ? '; allowed only with webhooks.url.disable_loopback: false'
      : verdict.class === 'private'
        ? '; allowed only with webhooks.url.disable_private_ips: false'
        : '; never allowed';
  return `Webhook host blocked: ${where} is a ${verdict.class} address (${verdict.range})${hint}`;
}
