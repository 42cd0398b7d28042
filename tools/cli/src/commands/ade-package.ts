import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import {
  createWorkerPackage,
  isJsonObject,
  openEnvelope,
  parseWorkerPackage,
  publicKeyFingerprint,
  readPackageDocument,
  signWorkerPackage,
  ValidationError,
  type JsonObject,
  type TrustedKey,
} from '@packetagent/contracts';
import { CliError, ExitCode, UsageError } from '../errors';
import { loadDocument, type DocumentSource } from '../documents';

/** What the offline `ade` commands need: files, standard input and output; no server, no API key. */
export interface AdeIo {
  documents: DocumentSource;
  stdout(text: string): void;
  json: boolean;
  now(): Date;
  builtBy: string;
}

export interface PackageOptions {
  file: string;
  repository: string;
  commit: string;
  path?: string;
  builtBy?: string;
  output?: string;
}

/** `packetagent ade package`: a WorkerPackage v1 from a definition file and where it came from, in canonical form. */
export async function packageWorker(io: AdeIo, options: PackageOptions): Promise<void> {
  const document = await loadDocument(options.file, io.documents);
  if (!isJsonObject(document.value)) throw new UsageError(`${document.label}: a worker definition is an object`);
  const pkg = refusedAsCli(() =>
    createWorkerPackage(document.value as JsonObject, {
      source: { repository: options.repository, commit: options.commit, path: options.path ?? (options.file === '-' ? 'worker.yaml' : options.file) },
      builtBy: options.builtBy ?? io.builtBy,
      builtAt: io.now().toISOString(),
    }),
  );
  const parsed = parseWorkerPackage(pkg);
  await emit(io, options.output, parsed.canonical);
  if (options.output) report(io, [`wrote ${options.output}`, `package digest ${parsed.digest}`, `requires ${requirementsLine(parsed.package.requires)}`], { digest: parsed.digest, requires: parsed.package.requires });
}

/** `packetagent ade sign`: a DSSE envelope over the package's canonical bytes, signed with an Ed25519 private key. */
export async function signPackage(io: AdeIo, options: { file: string; key: string; output?: string }): Promise<void> {
  const raw = await readRaw(io.documents, options.file);
  const document = refusedAsCli(() => readPackageDocument(raw));
  if (document.kind === 'envelope') throw new UsageError(`${options.file}: already a signed envelope; sign the package itself`);
  const parsed = refusedAsCli(() => parseWorkerPackage(document.value));
  const privateKey = await readRaw(io.documents, options.key);
  let envelope;
  try {
    envelope = signWorkerPackage(parsed.package, privateKey.toString('utf8'));
  } catch (error) {
    if (error instanceof ValidationError) throw refusal(error);
    throw new UsageError(`${options.key}: not an Ed25519 private key in PEM form (${error instanceof Error ? error.message : String(error)})`);
  }
  await emit(io, options.output, `${JSON.stringify(envelope, null, 2)}\n`);
  if (options.output) report(io, [`wrote ${options.output}`, `package digest ${parsed.digest}`, `signed by ${envelope.signatures[0]!.keyid}`], { digest: parsed.digest, keyId: envelope.signatures[0]!.keyid });
}

/**
 * `packetagent ade verify`: checks a package or its envelope as the server will (canonical
 * bytes, every signature, the definition, `requires`), trusting the given public keys.
 */
export async function verifyPackage(io: AdeIo, options: { file: string; trust: string[] }): Promise<void> {
  const raw = await readRaw(io.documents, options.file);
  const trusted: TrustedKey[] = [];
  for (const path of options.trust) {
    const pem = (await readRaw(io.documents, path)).toString('utf8');
    try {
      trusted.push({ fingerprint: publicKeyFingerprint(pem), publicKey: pem });
    } catch (error) {
      throw new UsageError(`${path}: not a public key in PEM form (${error instanceof Error ? error.message : String(error)})`);
    }
  }
  const document = refusedAsCli(() => readPackageDocument(raw));
  let value = document.kind === 'package' ? document.value : undefined;
  let signatures: Array<{ keyId: string; trusted: boolean }> = [];
  if (document.kind === 'envelope') {
    const opened = refusedAsCli(() => openEnvelope(document.envelope, trusted));
    ({ payload: value, signatures } = opened);
  }
  const parsed = refusedAsCli(() => parseWorkerPackage(value));
  const lines = [
    `worker ${parsed.definition.name}`,
    `package digest ${parsed.digest}`,
    `requires ${requirementsLine(parsed.package.requires)}`,
    `source ${parsed.package.provenance.source.repository} ${parsed.package.provenance.source.commit} ${parsed.package.provenance.source.path}`,
    ...(signatures.length === 0 ? ['unsigned'] : signatures.map((s) => `signed by ${s.keyId} (${s.trusted ? 'trusted' : 'valid, but not a key you trust'})`)),
  ];
  report(io, lines, { worker: parsed.definition.name, digest: parsed.digest, requires: parsed.package.requires, provenance: parsed.package.provenance, signatures });
}

export function registerAdeCommands(program: Command, deps: { io: (command: Command) => AdeIo }): Command {
  const ade = program
    .command('ade')
    .description(
      'PacketADE: build, sign and verify WorkerPackage v1 files offline; validate, deploy, update, run and watch them through the door with an actor token ' +
        '(env PACKETAGENT_ADE_TOKEN); issue actor tokens and trust publishers with the API key.',
    );
  ade
    .command('package')
    .description('Build a WorkerPackage v1 (canonical JSON) from a worker definition and its source.')
    .requiredOption('-f, --file <path>', 'worker definition, YAML or JSON ("-" for standard input)')
    .requiredOption('--repository <url>', 'repository the definition comes from')
    .requiredOption('--commit <sha>', 'commit of that repository (7 to 64 lower-case hex digits)')
    .option('--path <path>', 'path of the definition in the repository (default: the file given)')
    .option('--built-by <tool>', 'tool that built the package')
    .option('-o, --output <path>', 'write the package here instead of standard output')
    .action((options: PackageOptions, command: Command) => packageWorker(deps.io(command), options));
  ade
    .command('sign')
    .description('Sign a package with an Ed25519 private key (PEM): prints its DSSE envelope.')
    .requiredOption('-f, --file <path>', 'the package ("-" for standard input)')
    .requiredOption('--key <path>', 'Ed25519 private key, PKCS#8 PEM')
    .option('-o, --output <path>', 'write the envelope here instead of standard output')
    .action((options: { file: string; key: string; output?: string }, command: Command) => signPackage(deps.io(command), options));
  ade
    .command('verify')
    .description('Verify a package or its envelope: canonical bytes, signatures, definition and requirements.')
    .requiredOption('-f, --file <path>', 'the package or its envelope ("-" for standard input)')
    .option('--trust <path>', 'a trusted publisher public key (PEM); repeatable', (value: string, all: string[]) => [...all, value], [] as string[])
    .action((options: { file: string; trust: string[] }, command: Command) => verifyPackage(deps.io(command), options));
  return ade;
}

function requirementsLine(requires: { providers: string[]; tools: string[]; credentials: string[] }): string {
  const list = (items: string[]) => (items.length ? items.join(', ') : 'none');
  return `providers: ${list(requires.providers)}; tools: ${list(requires.tools)}; credentials: ${list(requires.credentials)}`;
}

function report(io: AdeIo, lines: string[], machine: unknown): void {
  io.stdout(io.json ? `${JSON.stringify(machine, null, 2)}\n` : `${lines.join('\n')}\n`);
}

async function emit(io: AdeIo, output: string | undefined, text: string): Promise<void> {
  if (!output) {
    io.stdout(text.endsWith('\n') ? text : `${text}\n`);
    return;
  }
  try {
    await writeFile(resolve(io.documents.cwd, output), text.endsWith('\n') ? text : `${text}\n`, { flag: 'wx' });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`cannot write ${output}: ${code === 'EEXIST' ? 'the file exists (choose another path)' : error instanceof Error ? error.message : String(error)}`);
  }
}

/** A file's bytes as they are (standard input for `-`), for packages, envelopes and keys that are judged on their bytes. */
export async function readRaw(documents: DocumentSource, path: string): Promise<Buffer> {
  if (path === '-') return Buffer.from(await documents.readStdin(), 'utf8');
  try {
    return await readFile(resolve(documents.cwd, path));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`cannot read ${path}: ${code === 'ENOENT' ? 'no such file' : error instanceof Error ? error.message : String(error)}`);
  }
}

function refusal(error: ValidationError): CliError {
  return new CliError(`${error.code}: ${error.message.split(': ')[0]}`, ExitCode.failure, error.issues);
}

function refusedAsCli<T>(act: () => T): T {
  try {
    return act();
  } catch (error) {
    if (error instanceof ValidationError) throw refusal(error);
    throw error;
  }
}
