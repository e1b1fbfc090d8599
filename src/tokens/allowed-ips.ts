// A token's IP allow-list: the entries an employee gives at creation, checked and written in one
// canonical CIDR text, and the compiled form the data surface matches request.ip against. The
// list is compiled once per cached token (src/tokens/authenticator.ts); a token without one
// carries null, so the common case costs one comparison per request.
//
// Families never cross: an IPv4 client (also one seen as IPv4-mapped IPv6, ::ffff:a.b.c.d in any
// spelling) is matched against the IPv4 entries only, an IPv6 client against the IPv6 entries only.
// node:net's BlockList alone would match an IPv4 client against an IPv6 network holding its mapped
// form, so `::/0` or `::/80` let every IPv4 client in; an employee who lists IPv6 networks means
// IPv6 clients. An entry written IPv4-mapped (`::ffff:0:0/96`) is stored as the IPv4 network it is
// (`0.0.0.0/0`), so that spelling is the way to name IPv4 clients in IPv6 notation.
import { BlockList, isIP } from 'node:net';
import { ipNotAllowed } from '../http/errors.js';

export const MAX_ALLOWED_IPS = 50;

export type AllowedIpParse = { ok: true; cidr: string } | { ok: false; problem: string };

const IPV4_BITS = 32;
const IPV6_BITS = 128;
// ::ffff:0:0/96: the IPv4-mapped addresses, whose upper 96 bits are 0...0ffff
const MAPPED_IPV4_HIGH = 0xffffn;
const DOTTED_TAIL = /(\d{1,3}(?:\.\d{1,3}){3})$/;
// the longest IPv6 CIDR in any spelling (a dotted tail) is well under this; anything longer is junk
const LONGEST_ENTRY = 64;

const ipv4ToNumber = (address: string) => address.split('.').reduce((value, part) => value * 256 + Number(part), 0);
const numberToIpv4 = (value: number) => [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.');

function ipv6ToBigInt(address: string): bigint {
  let text = address;
  const dotted = DOTTED_TAIL.exec(text);
  if (dotted) {
    const value = ipv4ToNumber(dotted[1]!);
    text = `${text.slice(0, -dotted[1]!.length)}${Math.floor(value / 65536).toString(16)}:${(value % 65536).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : Array<string>(8 - headGroups.length - tailGroups.length).fill('0');
  return [...headGroups, ...zeros, ...tailGroups].reduce((value, group) => (value << 16n) | BigInt(parseInt(group, 16)), 0n);
}

/** RFC 5952 text (lower case, the longest run of zeros compressed), as WHATWG URL writes it. */
function bigIntToIpv6(value: bigint): string {
  const groups = Array.from({ length: 8 }, (_, i) => ((value >> BigInt((7 - i) * 16)) & 0xffffn).toString(16));
  return new URL(`http://[${groups.join(':')}]/`).hostname.slice(1, -1);
}

const networkOf4 = (value: number, prefix: number) => (prefix === 0 ? 0 : value - (value % 2 ** (IPV4_BITS - prefix)));
const networkOf6 = (value: bigint, prefix: number) => (value >> BigInt(IPV6_BITS - prefix)) << BigInt(IPV6_BITS - prefix);

/**
 * One allow-list entry as canonical CIDR text, or why it is not one. A plain address is a
 * one-address network (`10.1.2.3` -> `10.1.2.3/32`, `2001:db8::1` -> `2001:db8::1/128`); IPv6 is
 * written RFC 5952 style; an IPv4-mapped IPv6 network (`::ffff:10.1.0.0/112`) is written as the
 * IPv4 network it is (`10.1.0.0/16`), because a client is matched by its IPv4 address. A CIDR with
 * host bits set (`10.1.2.3/16`) is refused rather than widened: it is as likely a mistyped
 * address as a mistyped network, and the employee should choose.
 */
export function parseAllowedIp(entry: string): AllowedIpParse {
  const quoted = JSON.stringify(entry.length > LONGEST_ENTRY ? `${entry.slice(0, LONGEST_ENTRY)}…` : entry);
  const notAnEntry = { ok: false, problem: `is not an IP address or CIDR: ${quoted}` } as const;
  if (entry.length > LONGEST_ENTRY) return notAnEntry;
  const [address = '', prefixText, ...rest] = entry.split('/');
  // isIP takes a zone id ("fe80::1%eth0"), which means nothing beyond the host that wrote it
  const family = address.includes('%') ? 0 : isIP(address);
  if (family === 0 || rest.length > 0) return notAnEntry;
  const bits = family === 4 ? IPV4_BITS : IPV6_BITS;
  if (prefixText !== undefined && !/^(0|[1-9]\d{0,2})$/.test(prefixText)) return notAnEntry;
  const prefix = prefixText === undefined ? bits : Number(prefixText);
  if (prefix > bits) {
    return { ok: false, problem: `is not a CIDR: the prefix length must be 0..${bits} for IPv${family}: ${quoted}` };
  }

  if (family === 4) {
    const value = ipv4ToNumber(address);
    const network = networkOf4(value, prefix);
    if (network !== value) {
      return { ok: false, problem: `is a CIDR with host bits set: ${quoted} (its network is ${numberToIpv4(network)}/${prefix})` };
    }
    return { ok: true, cidr: `${numberToIpv4(value)}/${prefix}` };
  }
  const value = ipv6ToBigInt(address);
  const network = networkOf6(value, prefix);
  if (network !== value) {
    return { ok: false, problem: `is a CIDR with host bits set: ${quoted} (its network is ${bigIntToIpv6(network)}/${prefix})` };
  }
  if (prefix >= 96 && value >> 32n === MAPPED_IPV4_HIGH) {
    return { ok: true, cidr: `${numberToIpv4(Number(value & 0xffffffffn))}/${prefix - 96}` };
  }
  return { ok: true, cidr: `${bigIntToIpv6(value)}/${prefix}` };
}

/**
 * A compiled list: its IPv4 and its IPv6 networks apart, each matched only by clients of its own
 * family (a list with no entry of a family refuses every client of it).
 */
export interface AllowList {
  ipv4: BlockList;
  ipv6: BlockList;
}

/** The compiled list: null for an empty one (any address). Entries are canonical CIDR text. */
export function compileAllowList(cidrs: readonly string[]): AllowList | null {
  if (cidrs.length === 0) return null;
  const list = { ipv4: new BlockList(), ipv6: new BlockList() };
  for (const cidr of cidrs) {
    const [address, prefix] = cidr.split('/') as [string, string];
    const family = isIP(address) === 4 ? 'ipv4' : 'ipv6';
    list[family].addSubnet(address, Number(prefix), family);
  }
  return list;
}

/**
 * The address as the allow-list sees it: an IPv4-mapped IPv6 address (a dual-stack socket's
 * `::ffff:10.1.2.3`, or a proxy's `::ffff:a01:203`) is its IPv4 address, so it is an IPv4 client.
 */
export function addressSeen(address: string): string {
  if (address.includes('%') || isIP(address) !== 6) return address;
  const value = ipv6ToBigInt(address);
  return value >> 32n === MAPPED_IPV4_HIGH ? numberToIpv4(Number(value & 0xffffffffn)) : address;
}

/** Whether `address` (request.ip) may use a token with this list; a null list allows any. */
export function isAddressAllowed(list: AllowList | null, address: string | undefined): boolean {
  if (list === null) return true;
  if (address === undefined) return false; // the socket is already gone
  const seen = addressSeen(address);
  const family = seen.includes('%') ? 0 : isIP(seen);
  if (family === 0) return false; // not a bare address (a zone id): never allowed
  return family === 4 ? list.ipv4.check(seen, 'ipv4') : list.ipv6.check(seen, 'ipv6');
}

/** The 403 for a request from outside the token's list, or null when its address is allowed. */
export function ipRefusal(token: { allowedIps: AllowList | null }, address: string | undefined) {
  return isAddressAllowed(token.allowedIps, address) ? null : ipNotAllowed(address === undefined ? 'unknown' : addressSeen(address));
}
