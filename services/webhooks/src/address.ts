import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { ArbiterError } from '@arbiter/contracts';

/** What the stack allows of endpoint addresses (`WEBHOOKS_ALLOW_HTTP`, `WEBHOOKS_ALLOW_PRIVATE`). */
export interface AddressPolicy {
  allowHttp: boolean;
  allowPrivate: boolean;
}

/**
 * Addresses a delivery never reaches unless `WEBHOOKS_ALLOW_PRIVATE=true`: unspecified, loopback,
 * private (RFC 1918, IPv6 ULA), link-local (with the cloud metadata address 169.254.169.254),
 * CGNAT (RFC 6598), the AWS IPv6 metadata address, and the IPv4-mapped forms of the IPv4 ones.
 */
const REFUSED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  REFUSED.addSubnet(net, prefix, 'ipv4');
  REFUSED.addSubnet(`::ffff:${net}`, 96 + prefix, 'ipv6');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
  ['fd00:ec2::254', 128],
] as const) {
  REFUSED.addSubnet(net, prefix, 'ipv6');
}

/** Whether a delivery may reach `address` (an IP literal) when private addresses are refused. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return !REFUSED.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** The host of a URL as an IP literal without IPv6 brackets, or the name. */
function bareHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/**
 * Checks an endpoint URL when it is saved: absolute `https` (or `http` when allowed), no
 * credentials, a host; an IP literal host must be allowed. 400 `validation_failed` (path `url`) with
 * the reason otherwise. Host names are resolved at each delivery ({@link resolveTarget}), not here.
 */
export function checkEndpointUrl(raw: string, policy: AddressPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw urlError('invalid_url', `\`url\` is not an absolute URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw urlError('invalid_url', `\`url\` must be an https URL, not ${url.protocol.slice(0, -1)}`);
  }
  if (url.protocol === 'http:' && !policy.allowHttp) {
    throw urlError('https_required', '`url` must use https (this stack does not allow http endpoints)');
  }
  if (url.username !== '' || url.password !== '') throw urlError('invalid_url', '`url` must not hold credentials');
  if (url.hash !== '') throw urlError('invalid_url', '`url` must not have a fragment');
  const host = bareHost(url);
  if (host === '') throw urlError('invalid_url', '`url` has no host');
  if (isIP(host) !== 0 && !policy.allowPrivate && !isPublicAddress(host)) {
    throw urlError('address_refused', `\`url\` host \`${host}\` is a private, loopback, link-local or metadata address`);
  }
  return url;
}

function urlError(code: string, message: string): ArbiterError {
  return new ArbiterError('validation_failed', message, [{ code, message, path: 'url' }]);
}

/**
 * {@link checkEndpointUrl} for a URL being saved, which also refuses the loopback names
 * (`localhost`, `*.localhost`) up front; other names are only known at delivery.
 */
export function checkNewEndpointUrl(raw: string, policy: AddressPolicy): URL {
  const url = checkEndpointUrl(raw, policy);
  const host = bareHost(url).toLowerCase().replace(/\.$/, '');
  if (!policy.allowPrivate && (host === 'localhost' || host.endsWith('.localhost'))) {
    throw urlError('address_refused', `\`url\` host \`${host}\` is a loopback name, which this stack does not deliver to`);
  }
  return url;
}

/** Why a delivery did not go out: the URL or its resolved address is not allowed now. */
export class RefusedAddress extends Error {
  override readonly name = 'RefusedAddress';
}

/** Where one attempt connects: the URL and the address its host resolved to (checked). */
export interface Target {
  url: URL;
  address: string;
  family: 4 | 6;
}

/**
 * Resolves an endpoint's host for one attempt and checks every address it resolves to (a name with
 * one private address among public ones is refused: which one a client picks is not ours to know).
 * The attempt then connects to the checked address only, so a second lookup cannot rebind the
 * name elsewhere. Throws {@link RefusedAddress} for a refused URL or address.
 */
export async function resolveTarget(raw: string, policy: AddressPolicy): Promise<Target> {
  let url: URL;
  try {
    url = checkEndpointUrl(raw, policy);
  } catch (err) {
    throw new RefusedAddress(err instanceof Error ? err.message : String(err));
  }
  const host = bareHost(url);
  const family = isIP(host);
  const addresses = family !== 0 ? [{ address: host, family }] : await lookup(host, { all: true, verbatim: true });
  if (addresses.length === 0) throw new Error(`\`${host}\` did not resolve`);
  if (!policy.allowPrivate) {
    const bad = addresses.find((a) => !isPublicAddress(a.address));
    if (bad) throw new RefusedAddress(`\`${host}\` resolves to ${bad.address}, a private, loopback, link-local or metadata address`);
  }
  const [first] = addresses as [(typeof addresses)[number]];
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}
