import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { collectPayloadRefs, parsePayload, PayloadDigestSchema, payloadMatches, sha256Hex } from '@packetagent/contracts';
import type { CommandContext } from '../context';
import { CliError, ExitCode, UsageError } from '../errors';

/** Bytes as a person reads them: 812 B, 586.7 KiB, 5.0 MiB. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/**
 * The references an event's data holds, as `path: <size> sha256:<digest>`, for a log line: the
 * content itself may be megabytes, `packetagent payload get DIGEST` prints it.
 */
export function payloadNotes(data: unknown): string[] {
  return collectPayloadRefs(data).map(({ path, ref }) => `${path || 'data'}: ${formatBytes(ref.size)} sha256:${ref.digest}`);
}

export interface GetPayloadOptions {
  /** Write the content bytes to this file instead of printing the value. */
  out?: string;
}

/**
 * `packetagent payload get DIGEST`: the content a `$payload` reference stands for, checked
 * against the digest here as well as on the server. Printed as text when the value is a string
 * (model text), as indented JSON otherwise; `--out` writes the exact stored bytes.
 */
export async function getPayload(context: CommandContext, digest: string, options: GetPayloadOptions): Promise<void> {
  if (!PayloadDigestSchema.safeParse(digest).success) throw new UsageError(`"${digest}" is not a payload digest: 64 lower-case hex digits`);
  const { client } = context;
  const bytes = await client.getBytes(client.workspacePath('payloads', digest));
  if (!payloadMatches(bytes, { digest, size: bytes.length })) {
    throw new CliError(`the content answered for payload ${digest} digests to ${sha256Hex(bytes)}`, ExitCode.failure);
  }
  const value = parsePayload(bytes);
  const described = { digest, size: bytes.length, mediaType: 'application/json' };
  if (options.out !== undefined) {
    const file = resolve(context.documents.cwd, options.out);
    try {
      await writeFile(file, bytes);
    } catch (error) {
      throw new UsageError(`cannot write ${options.out}: ${error instanceof Error ? error.message : String(error)}`);
    }
    context.report([`wrote ${formatBytes(bytes.length)} to ${options.out} (sha256:${digest} verified)`], { ...described, file });
    return;
  }
  context.report([typeof value === 'string' ? value : JSON.stringify(value, null, 2)], { ...described, value });
}
