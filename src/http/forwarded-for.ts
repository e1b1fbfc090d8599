// X-Forwarded-For made safe to trust. With TRUST_PROXY set, Fastify (proxy-addr) walks the header
// from the right past trusted proxies and returns the first untrusted entry as request.ip, as it
// is, whether it is an address or not: "not-an-ip", 8,000 characters of junk or "[2001:db8::1]:443"
// would become the rate-limit key (a fresh budget per junk value) and the logged address.
// normaliseForwardedFor() rewrites the raw header first: every entry an address, bare.
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

/** How many entries (the nearest hops) are kept: a chain of proxies is never longer. */
export const MAX_FORWARDED_ENTRIES = 32;

const IPV4_WITH_PORT = /^(\d{1,3}(?:\.\d{1,3}){3}):(\d{1,5})$/;
const BRACKETED_IPV6 = /^\[([^\]]+)\](?::(\d{1,5}))?$/;
const MAPPED_IPV4 = /^::ffff:([\da-f]{1,4}):([\da-f]{1,4})$/;

function validPort(port: string | undefined): boolean {
  return port === undefined || Number(port) <= 65535;
}

/** IPv6 in its one canonical text (RFC 5952: lower case, zeros compressed); IPv4-mapped as IPv4. */
function canonicalIpv6(address: string): string | null {
  let hostname: string;
  try {
    // WHATWG URL serialises an IPv6 host canonically; it refuses zone ids ("fe80::1%eth0")
    hostname = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
  const mapped = MAPPED_IPV4.exec(hostname);
  if (mapped) {
    const high = parseInt(mapped[1]!, 16);
    const low = parseInt(mapped[2]!, 16);
    return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  }
  return hostname;
}

/**
 * One X-Forwarded-For entry as a bare IP address, or null if it is not one. Takes IPv4
 * (`203.0.113.7`), IPv4 with a port (`203.0.113.7:5555`), IPv6 (`2001:db8::1`) and bracketed IPv6
 * with or without a port (`[2001:db8::1]`, `[2001:db8::1]:443`). One address has one text, so it
 * has one rate-limit budget: IPv6 is canonicalised and IPv4-mapped IPv6 is written as IPv4.
 */
export function parseForwardedAddress(entry: string): string | null {
  if (entry.length > 64) return null; // the longest address with brackets and port is 55
  if (isIP(entry) === 4) return entry;
  if (isIP(entry) === 6) return canonicalIpv6(entry);
  const v4 = IPV4_WITH_PORT.exec(entry);
  if (v4) return isIP(v4[1]!) === 4 && validPort(v4[2]) ? v4[1]! : null;
  const v6 = BRACKETED_IPV6.exec(entry);
  if (v6) return isIP(v6[1]!) === 6 && validPort(v6[2]) ? canonicalIpv6(v6[1]!) : null;
  return null;
}

/**
 * The header rewritten: entries read from the right (the nearest hop first), each normalised to a
 * bare address; at the first entry that is not an address, it and everything left of it are
 * dropped (nothing beyond it can be attributed to anyone), and at most MAX_FORWARDED_ENTRIES are
 * kept. Empty entries are skipped, as proxy-addr skips them. Null: no entry left.
 */
export function normaliseForwardedForHeader(header: string | string[]): string | null {
  const entries = (Array.isArray(header) ? header.join(',') : header).split(',');
  const kept: string[] = [];
  for (let i = entries.length - 1; i >= 0 && kept.length < MAX_FORWARDED_ENTRIES; i--) {
    const entry = entries[i]!.trim();
    if (entry === '') continue;
    const address = parseForwardedAddress(entry);
    if (address === null) break;
    kept.push(address);
  }
  return kept.length > 0 ? kept.reverse().join(', ') : null;
}

/**
 * Rewrites the raw request's X-Forwarded-For in place, before Fastify reads it (request.ip,
 * request.ips): with no entry left, the header is removed and request.ip is the address of the
 * connecting (trusted) proxy itself.
 */
export function normaliseForwardedFor(request: IncomingMessage): void {
  const header = request.headers['x-forwarded-for'];
  if (header === undefined) return;
  const normalised = normaliseForwardedForHeader(header);
  if (normalised === null) delete request.headers['x-forwarded-for'];
  else request.headers['x-forwarded-for'] = normalised;
}
