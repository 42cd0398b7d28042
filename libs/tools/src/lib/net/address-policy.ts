import ipaddr from 'ipaddr.js';

/**
 * Addresses refused whatever range ipaddr.js puts them in: cloud metadata endpoints, named so a
 * future change of range tables cannot let one through.
 */
const METADATA_ADDRESSES = new Set(['169.254.169.254', '169.254.170.2', '169.254.169.253', '100.100.100.200', '192.0.0.192', 'fd00:ec2::254', 'fd00:ec2::23']);

/**
 * Ranges refused in addition to what ipaddr.js classifies as non-unicast: translation and
 * embedding prefixes whose tables differ between versions, where an IPv4 address hides inside
 * an IPv6 one.
 */
const EXTRA_RANGES: ReadonlyArray<[ipaddr.IPv4 | ipaddr.IPv6, number, string]> = (
  [
    ['64:ff9b::', 96, 'NAT64 (RFC 6052)'],
    ['64:ff9b:1::', 48, 'local-use NAT64 (RFC 8215)'],
    ['::ffff:0:0', 96, 'IPv4-mapped'],
    ['::', 96, 'IPv4-compatible'],
    ['2002::', 16, '6to4'],
    ['2001::', 32, 'Teredo'],
    ['fec0::', 10, 'site-local'],
    ['0.0.0.0', 8, 'this network'],
  ] as const
).map(([address, bits, name]) => [ipaddr.parse(address), bits, name]);

/** An IP literal as ipaddr.js reads it, without brackets or a zone; null when it is not one. */
export function parseIp(text: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (!ipaddr.isValid(bare)) return null;
  try {
    return ipaddr.parse(bare);
  } catch {
    return null;
  }
}

/**
 * Why `address` must not be reached from a tool, or null when it is an ordinary public unicast
 * address. Only ipaddr.js's `unicast` range passes: private, loopback, link-local, unique-local,
 * carrier-grade NAT, multicast, unspecified, broadcast, reserved, documentation, benchmarking
 * and every IPv6 form that carries an IPv4 address are refused.
 */
export function forbiddenAddressReason(address: string): string | null {
  const parsed = parseIp(address);
  if (!parsed) return 'not an IP address';
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).zoneId) return 'scoped IPv6 address';
  const text = parsed.toNormalizedString();
  if (METADATA_ADDRESSES.has(text) || METADATA_ADDRESSES.has(parsed.toString())) return 'cloud metadata address';
  const range = parsed.range();
  if (range !== 'unicast') return `${range} address`;
  for (const [network, bits, name] of EXTRA_RANGES) {
    if (network.kind() === parsed.kind() && parsed.match(network, bits)) return `${name} address`;
  }
  return null;
}

/** Compares two IP literals by value (`::ffff:a00:1` equals `::ffff:10.0.0.1`). */
export function sameAddress(a: string, b: string): boolean {
  const x = parseIp(a);
  const y = parseIp(b);
  return x !== null && y !== null && x.kind() === y.kind() && x.toNormalizedString() === y.toNormalizedString();
}
