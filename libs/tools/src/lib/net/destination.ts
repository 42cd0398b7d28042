import { lookup } from 'node:dns/promises';
import { ToolFailure } from '../errors';
import type { HostResolver, ResolvedAddress } from '../tool.types';
import { forbiddenAddressReason, parseIp } from './address-policy';

/** The system resolver: every A and AAAA answer, as `getaddrinfo` gives them. */
export const systemResolver: HostResolver = async (hostname) => {
  const answers = await lookup(hostname, { all: true, verbatim: true });
  return answers.map((answer) => ({ address: answer.address, family: answer.family === 6 ? 6 : 4 }));
};

/** The port a URL connects to, explicit or the scheme's default. */
export function effectivePort(url: URL): number {
  if (url.port) return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

/** The host of a URL without IPv6 brackets, as sockets and resolvers want it. */
export function bareHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

export interface DestinationRules {
  resolveHost: HostResolver;
  /** Exact `host:port` pairs that may resolve to private addresses (operator allowlist). */
  allowPrivate: readonly string[];
}

/**
 * Resolves the URL's host and checks EVERY address it has: one private answer among public ones
 * is refused too, since which one a client picks is not ours to know. Returns the address to
 * connect to; callers pin the connection to it, so a second, different DNS answer (rebinding)
 * is never used.
 */
export async function checkedDestination(url: URL, rules: DestinationRules): Promise<ResolvedAddress> {
  const host = bareHost(url);
  const port = effectivePort(url);
  const allowlisted = rules.allowPrivate.includes(`${url.hostname}:${port}`);
  const literal = parseIp(host);
  let addresses: readonly ResolvedAddress[];
  if (literal) {
    addresses = [{ address: literal.toString(), family: literal.kind() === 'ipv6' ? 6 : 4 }];
  } else {
    try {
      addresses = await rules.resolveHost(host);
    } catch (error) {
      throw new ToolFailure('dns_failed', `could not resolve ${host}`, null, { cause: error });
    }
    if (addresses.length === 0) throw new ToolFailure('dns_failed', `${host} has no addresses`);
  }
  if (!allowlisted) {
    for (const { address } of addresses) {
      const reason = forbiddenAddressReason(address);
      if (reason) {
        const via = literal ? '' : ` (${host} resolves to it)`;
        throw new ToolFailure('destination_not_allowed', `refusing to connect to ${address}${via}: ${reason}`);
      }
    }
  }
  return addresses[0]!;
}
