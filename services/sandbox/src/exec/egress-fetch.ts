import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import type { EgressRecord, EgressRequest } from '@packetagent/contracts';
import { checkedFetch, type HostResolver } from '@packetagent/tools';

/** Fetches a command's declared egress into a directory that is then mounted read-only at /input/egress. */
export interface EgressFetcher {
  fetch(requests: readonly EgressRequest[], dir: string, signal: AbortSignal): Promise<EgressRecord[]>;
}

export interface CheckedEgressOptions {
  allowPrivate: readonly string[];
  maxBytes: number;
  timeoutMs: number;
  resolveHost?: HostResolver;
}

function fileName(request: EgressRequest): string {
  if (request.as) return request.as;
  const last = posix.basename(new URL(request.url).pathname);
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(last) ? last : 'download';
}

/**
 * GET only, through the same client as http_fetch: every resolved address checked, the
 * connection made to the checked one, no redirects followed, the size capped. The command never
 * gets a network; it gets these files.
 */
export class CheckedEgressFetcher implements EgressFetcher {
  constructor(private readonly options: CheckedEgressOptions) {}

  async fetch(requests: readonly EgressRequest[], dir: string, signal: AbortSignal): Promise<EgressRecord[]> {
    const records: EgressRecord[] = [];
    const names = new Set<string>();
    for (const request of requests) {
      const as = fileName(request);
      if (names.has(as)) throw new Error(`two egress files would both be /input/egress/${as}`);
      names.add(as);
      const response = await checkedFetch({
        url: request.url,
        method: 'GET',
        headers: { accept: '*/*' },
        maxResponseBytes: this.options.maxBytes,
        timeoutMs: this.options.timeoutMs,
        allowPrivate: [...this.options.allowPrivate],
        ...(this.options.resolveHost ? { resolveHost: this.options.resolveHost } : {}),
        signal,
      });
      if (response.status < 200 || response.status > 299) throw new Error(`GET ${request.url} answered ${response.status}`);
      await writeFile(join(dir, as), response.body, { mode: 0o444 });
      records.push({ url: request.url, as, size: response.body.length, digest: createHash('sha256').update(response.body).digest('hex'), connectedAddress: response.connectedAddress, status: response.status });
    }
    return records;
  }
}
