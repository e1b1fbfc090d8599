// Where webhooks may be sent (docs/webhooks.md, "Which URLs are accepted"): an endpoint's URL is
// checked when it is registered and again at every delivery, after DNS resolution, and the
// connection goes to the very address that was checked (no second lookup a DNS rebinding could
// answer differently). Loopback, private, link-local, unique-local, carrier-grade NAT, multicast,
// reserved and the cloud metadata addresses are refused unless WEBHOOK_ALLOWED_NETWORKS names them
// (an SRE's setting: an in-house receiver, or the tests' loopback ones). https is required, except
// to an allowed network.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** The networks an SRE allowed despite the rules, parsed (WEBHOOK_ALLOWED_NETWORKS). */
export type AllowedNetworks = ReadonlyArray<[ipaddr.IPv4 | ipaddr.IPv6, number]>;

export class RefusedUrl extends Error {}

/** ipaddr.js's names of the ranges only the public internet may be sent to. */
const PUBLIC_RANGE = 'unicast';
const MAX_URL_LENGTH = 2048;

/** The CIDR list of WEBHOOK_ALLOWED_NETWORKS, or why it is not one. */
export function parseAllowedNetworks(text: string): AllowedNetworks | { problem: string } {
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  const networks: Array<[ipaddr.IPv4 | ipaddr.IPv6, number]> = [];
  for (const entry of entries) {
    try {
      networks.push(
        entry.includes('/') ? ipaddr.parseCIDR(entry) : [ipaddr.parse(entry), ipaddr.parse(entry).kind() === 'ipv4' ? 32 : 128],
      );
    } catch {
      return { problem: `is not a list of IP networks: ${JSON.stringify(entry.slice(0, 60))} (write e.g. 127.0.0.0/8,10.20.0.0/16)` };
    }
  }
  return networks;
}

/** An address as ipaddr.js reads it, IPv4-mapped IPv6 as the IPv4 address it carries. */
function parsed(address: string): ipaddr.IPv4 | ipaddr.IPv6 {
  const value = ipaddr.parse(address);
  return value.kind() === 'ipv6' && (value as ipaddr.IPv6).isIPv4MappedAddress() ? (value as ipaddr.IPv6).toIPv4Address() : value;
}

function inAllowedNetwork(address: ipaddr.IPv4 | ipaddr.IPv6, allowed: AllowedNetworks): boolean {
  return allowed.some(([network, bits]) => network.kind() === address.kind() && address.match([network, bits] as never));
}

/** Why an address may not be sent to, or null when it may. */
export function addressProblem(address: string, allowed: AllowedNetworks): string | null {
  if (!isIP(address)) return `${address} is not an IP address`;
  const value = parsed(address);
  if (inAllowedNetwork(value, allowed)) return null;
  const range = value.range();
  if (range !== PUBLIC_RANGE) return `${value.toString()} is a ${range} address, which webhooks are not sent to`;
  return null;
}

/** The URL as an endpoint may have it: absolute, http(s), no credentials, not too long. Throws RefusedUrl. */
export function checkUrlShape(text: string): URL {
  if (text.length > MAX_URL_LENGTH) throw new RefusedUrl(`must be at most ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new RefusedUrl('must be an absolute https URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new RefusedUrl('must be an https URL');
  if (url.username || url.password) throw new RefusedUrl('must not carry a user name or password (sign with the endpoint secret instead)');
  if (url.hash) throw new RefusedUrl('must not have a #fragment');
  return url;
}

/**
 * The addresses a URL's host resolves to, each checked; throws RefusedUrl naming the first refused
 * one (every address must pass: a name that resolves to a public and a private address is refused).
 */
export async function resolveChecked(url: URL, allowed: AllowedNetworks): Promise<Array<{ address: string; family: number }>> {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  let addresses: Array<{ address: string; family: number }>;
  if (isIP(host)) addresses = [{ address: host, family: isIP(host) }];
  else {
    try {
      addresses = await lookup(host, { all: true, verbatim: true });
    } catch (error) {
      throw new RefusedUrl(`its host ${host} does not resolve (${(error as NodeJS.ErrnoException).code ?? 'lookup failed'})`);
    }
  }
  if (addresses.length === 0) throw new RefusedUrl(`its host ${host} does not resolve`);
  for (const { address } of addresses) {
    const problem = addressProblem(address, allowed);
    if (problem) throw new RefusedUrl(problem);
  }
  // plain http only to networks an SRE allowed: anything else could be read or changed on the way
  if (url.protocol === 'http:' && !addresses.every(({ address }) => inAllowedNetwork(parsed(address), allowed)))
    throw new RefusedUrl('must be an https URL (http is accepted only to WEBHOOK_ALLOWED_NETWORKS)');
  return addresses;
}
