import { readRaw } from './ade-package';
import { AdeExitCode, AdeOutcome, type AdeDoorContext, type ValidationReport } from './ade-door-client';

function list(items: readonly string[]): string {
  return items.length ? items.join(', ') : 'none';
}

function signatureLine(signature: ValidationReport['signatures'][number]): string {
  const trust = signature.trusted ? 'trusted publisher' : signature.acknowledged ? 'not trusted, acknowledged for this package' : 'not trusted';
  return `signed by ${signature.keyId} (${trust})`;
}

/** What a person reads a validation for: the package, who signed it and whether that is accepted, and what is missing to run it. */
export function validationLines(report: ValidationReport): string[] {
  const lines = [
    `worker ${report.workerName}`,
    `package digest ${report.packageDigest}`,
    ...(report.signatures.length ? report.signatures.map(signatureLine) : ['unsigned']),
    report.accepted ? 'accepted' : `refused: ${report.refusal ? `${report.refusal.code}: ${report.refusal.detail}` : 'no reason given'}`,
    `requires providers: ${list(report.requires.providers)}; tools: ${list(report.requires.tools)}; credentials: ${list(report.requires.credentials)}`,
  ];
  if (report.preflight.ready) lines.push('preflight: ready');
  else lines.push('preflight: not ready, missing:', ...report.preflight.missing.map((item) => `  ${item.kind} ${item.name}: ${item.reason}`));
  return lines;
}

/** Null when the package is accepted and ready to run; otherwise why not, with its exit code. */
export function validationOutcome(report: ValidationReport): AdeOutcome | null {
  if (!report.accepted) return new AdeOutcome(`this workspace does not accept the package (${report.refusal?.code ?? 'refused'})`, AdeExitCode.refused);
  if (!report.preflight.ready) {
    const count = report.preflight.missing.length;
    return new AdeOutcome(`the package is accepted, but ${count === 1 ? '1 requirement is' : `${count} requirements are`} missing here`, AdeExitCode.notReady);
  }
  return null;
}

/** `packetagent ade validate FILE`: the server's report on the package or envelope, sent as the file holds it. */
export async function validatePackage(context: AdeDoorContext, file: string): Promise<void> {
  const report = await context.door.validate(await readRaw(context.documents, file));
  context.report(validationLines(report), report);
  const outcome = validationOutcome(report);
  if (outcome) throw outcome;
}
