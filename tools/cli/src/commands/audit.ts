import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { AuditReportSchema, verifyEvidenceBundle } from '@packetagent/contracts';
import type { CommandContext } from '../context';
import { CliError, ExitCode, UsageError } from '../errors';

interface Located {
  stream: string | null;
  streamVersion: number | null;
  globalPosition: number | null;
  reason: string;
  detail: string;
}

/** Breaks grouped by stream, each line `v<version> @<position> <reason>: <detail>`. */
function breakLines(breaks: readonly Located[]): string[] {
  const byStream = new Map<string, Located[]>();
  for (const item of breaks) {
    const key = item.stream ?? '(bundle)';
    byStream.set(key, [...(byStream.get(key) ?? []), item]);
  }
  return [...byStream.entries()].flatMap(([stream, items]) => [
    `  ${stream}`,
    ...items.map((item) => {
      const where = [item.streamVersion === null ? null : `v${item.streamVersion}`, item.globalPosition === null ? null : `@${item.globalPosition}`].filter(Boolean).join(' ');
      return `    ${where ? `${where} ` : ''}${item.reason}: ${item.detail}`;
    }),
  ]);
}

/** Printed, then the exit code says it: scripts branch on 1, people read the lines. */
class VerificationFailedError extends CliError {
  constructor(what: string, count: number) {
    super(`${what} does not verify: ${count} ${count === 1 ? 'break' : 'breaks'}`, ExitCode.failure);
  }
}

/** `packetagent audit verify`: the server walks every stream of the workspace. */
export async function auditVerify(context: CommandContext): Promise<void> {
  const { client } = context;
  const report = await client.get(client.workspacePath('audit', 'verify'), AuditReportSchema);
  const payloads = report.payloadsChecked ? `, ${report.payloadsChecked} payload references` : '';
  const summary = `${report.streamsChecked} streams, ${report.eventsChecked} events${payloads} checked`;
  context.report(report.ok ? [`ok: ${summary}`] : [`${report.breaks.length} breaks in ${summary}:`, ...breakLines(report.breaks)], report);
  if (!report.ok) throw new VerificationFailedError('the event store', report.breaks.length);
}

export interface OfflineOutput {
  cwd: string;
  json: boolean;
  stdout(text: string): void;
}

/** `packetagent audit verify-bundle FILE`: checks an evidence bundle with nothing but the file. */
export async function auditVerifyBundle(output: OfflineOutput, file: string): Promise<void> {
  let text: string;
  try {
    text = await readFile(resolve(output.cwd, file), 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageError(`${file} is not JSON`);
  }
  const result = verifyEvidenceBundle(value);
  const payloads = result.payloadsChecked ? `, ${result.payloadsChecked} payload references` : '';
  const summary = `run ${result.runId ?? '?'}: ${result.streamsChecked} streams, ${result.eventsChecked} events, ${result.checkpointsChecked} checkpoints${payloads} checked`;
  const lines = result.ok ? [`ok: ${summary}`, `bundle digest ${result.bundleDigest}`] : [`${result.breaks.length} breaks in ${summary}:`, ...breakLines(result.breaks)];
  output.stdout(output.json ? `${JSON.stringify(result, null, 2)}\n` : `${lines.join('\n')}\n`);
  if (!result.ok) throw new VerificationFailedError(file, result.breaks.length);
}

/** Adds `audit verify` and `audit verify-bundle` to the program. */
export function registerAuditCommands(
  program: Command,
  deps: { context(command: Command): CommandContext; stdout(text: string): void; cwd: string },
): void {
  const audit = program.command('audit').description('Tamper evidence: digest chains of the event store and evidence bundles.');
  audit
    .command('verify')
    .description(
      "Recompute every event digest and chain link of the workspace's streams and check every payload reference against the stored content; lists breaks by stream and position, exit 1 when any.",
    )
    .action((_options: unknown, command: Command) => auditVerify(deps.context(command)));
  audit
    .command('verify-bundle')
    .description('Check an evidence bundle (GET /runs/{id}/evidence) offline: event digests, chain links, checkpoints, index, payload contents, bundle digest; exit 1 on any break.')
    .argument('<file>', 'the bundle, as JSON')
    .action((file: string, _options: unknown, command: Command) =>
      auditVerifyBundle({ cwd: deps.cwd, json: Boolean(command.optsWithGlobals<{ json?: boolean }>().json), stdout: deps.stdout }, file),
    );
}
