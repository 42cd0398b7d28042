import { InvalidArgumentError, type Command } from 'commander';
import { ACTOR_OPERATIONS, type ActorOperation } from '@packetagent/contracts';
import type { CommandContext } from '../context';
import { acknowledgePackage, issueActorToken, listActorTokens, listPublishers, parseLifetime, parseOperations, revokeActorToken, trustPublisher } from './ade-admin';
import { activateDeployment, deployPackage, updateDeployment } from './ade-deploy';
import { controlDeployment, inspectDeployment, listDeploymentRuns } from './ade-deployment';
import { ADE_TOKEN_VARIABLE, AdeExitCode, type AdeDoorContext } from './ade-door-client';
import { validatePackage } from './ade-validate';
import { watchFeed, type WatchIo, type WatchOptions } from './ade-watch';

export interface AdeDoorDeps {
  /** The door with the actor token (--token or PACKETAGENT_ADE_TOKEN) at the CLI's API URL. */
  door(command: Command): AdeDoorContext;
  watchIo(command: Command): WatchIo;
  /** The workspace API with the API key, for what an admin decides. */
  admin(command: Command): CommandContext;
  now(): number;
  positiveInteger(value: string): number;
}

function feedCursor(value: string): string {
  if (!/^(0|[1-9]\d{0,15})$/.test(value)) throw new InvalidArgumentError('a feed cursor: the decimal position of an event, or 0 for the start.');
  return value;
}

/** A door command: it takes the actor token, never the API key. */
function doorCommand(parent: Command, name: string): Command {
  return parent.command(name).option('--token <token>', `PacketADE actor token (env ${ADE_TOKEN_VARIABLE}; prefer the variable: flags show in process lists)`);
}

/**
 * The PacketADE door from the command line, as a reference client: validate, deploy, update,
 * run and watch with an actor token; and, with the API key, the tokens and trust an admin grants.
 */
export function registerAdeDoorCommands(ade: Command, deps: AdeDoorDeps): void {
  doorCommand(ade, 'validate')
    .summary('Ask the server whether it would deploy a package, and what is missing to run it (exit 0, 4 or 5).')
    .description(
      'Ask the server whether it would deploy a package or its envelope (sent as the file holds it): digest, worker, signatures and their trust, ' +
        `acceptance, and what is missing to run it. Exit 0 when accepted and ready, ${AdeExitCode.refused} when the workspace refuses the signer (or its absence), ` +
        `${AdeExitCode.notReady} when accepted but something is missing; 1 for a malformed or tampered package, 3 for a refused token.`,
    )
    .argument('<file>', 'a WorkerPackage v1 or its DSSE envelope ("-" for standard input)')
    .action((file: string, _options: unknown, command: Command) => validatePackage(deps.door(command), file));
  doorCommand(ade, 'deploy')
    .summary('Deploy a signed package; prints the receipt and webhook secrets (shown once).')
    .description(
      'Deploy a signed package (or its envelope): prints the deployment, its version and digests, whether it is new or the one deployed before ' +
        `with the same package or idempotency key, and webhook secrets, shown only once. Exit ${AdeExitCode.refused} when the workspace refuses the signer ` +
        '(publisher_untrusted, package_unsigned), 3 for a refused token or an operation it does not allow, 1 for a malformed package or a reused idempotency key.',
    )
    .argument('<file>', 'the package or its envelope, as `ade package` / `ade sign` wrote it ("-" for standard input)')
    .option('--idempotency-key <key>', 'the same key again answers the same deployment; reused with another package it is refused')
    .action((file: string, options: { idempotencyKey?: string }, command: Command) => deployPackage(deps.door(command), file, options));
  doorCommand(ade, 'update')
    .summary('Move a deployment to a new version made from a package.')
    .description(
      "Make a new version of a deployment's worker from a package and move the deployment to it; the same package again changes nothing. " +
        `Exit codes as for deploy (${AdeExitCode.refused} for a refused signer).`,
    )
    .argument('<deployment>', 'deployment id, as deploy printed it')
    .argument('<file>', 'the package or its envelope ("-" for standard input)')
    .action((deploymentId: string, file: string, _options: unknown, command: Command) => updateDeployment(deps.door(command), deploymentId, file));
  doorCommand(ade, 'run')
    .description('Start a run of a deployment; prints the run id and its state.')
    .argument('<deployment>', 'deployment id')
    .option('--input <json>', 'run input as JSON, or @file for a JSON or YAML file')
    .option('--idempotency-key <key>', 'the same key again answers the same run')
    .action((deploymentId: string, options: { input?: string; idempotencyKey?: string }, command: Command) => activateDeployment(deps.door(command), deploymentId, options));
  doorCommand(ade, 'watch')
    .summary("Follow the actor's event feed; --ack acknowledges, --until-terminal exits with the run's outcome.")
    .description(
      "Follow the actor's event feed: one line per event (cursor, time, type, stream; with --json the event itself, one per line). " +
        'Starts after --after, else after the acknowledged cursor; reconnects after the last cursor printed, waiting longer after each failure in a row. ' +
        `Ctrl-C or SIGTERM stops it (exit 0). With --until-terminal it exits when that run ends: 0 for run.succeeded, ${AdeExitCode.runNotSucceeded} for any other end, ` +
        '130/143 when stopped first; a run that has already ended is not followed, and answers the same codes at once.',
    )
    .option('--after <cursor>', 'start after this cursor (0: from the start of the feed)', feedCursor)
    .option('--ack', "acknowledge each event's cursor once it is printed, so the next watch starts after it")
    .option('--until-terminal <run>', 'exit when this run ends')
    .action((options: WatchOptions, command: Command) => watchFeed(deps.door(command).door, deps.watchIo(command), options));

  const deployment = ade.command('deployment').description("The actor's deployments through the door.");
  doorCommand(deployment, 'get')
    .description("A deployment's status, version and runs.")
    .argument('<deployment>', 'deployment id')
    .action((id: string, _options: unknown, command: Command) => inspectDeployment(deps.door(command), id));
  doorCommand(deployment, 'runs')
    .description("A page of a deployment's runs, newest first: id, state, version, creation time.")
    .argument('<deployment>', 'deployment id')
    .option('--limit <n>', 'at most this many (the API caps it at 200)', deps.positiveInteger, 50)
    .option('--cursor <cursor>', 'the page after this one, as the last line of the previous page names it')
    .action((id: string, options: { limit: number; cursor?: string }, command: Command) => listDeploymentRuns(deps.door(command), id, options));
  for (const action of ['pause', 'resume', 'revoke'] as const) {
    doorCommand(deployment, action)
      .description({ pause: 'Pause a deployment: new runs are held until it resumes.', resume: 'Resume a paused deployment.', revoke: 'Revoke a deployment for good.' }[action])
      .argument('<deployment>', 'deployment id')
      .option('--reason <text>', 'recorded with the request')
      .action((id: string, options: { reason?: string }, command: Command) => controlDeployment(deps.door(command), action, id, options));
  }
  doorCommand(deployment, 'rollback')
    .description('Move a deployment back (or to any other version of its worker).')
    .argument('<deployment>', 'deployment id')
    .requiredOption('--version <n>', 'the version to run', deps.positiveInteger)
    .option('--reason <text>', 'recorded with the request')
    .action((id: string, options: { version: number; reason?: string }, command: Command) => controlDeployment(deps.door(command), 'rollback', id, options));

  const actor = ade.command('actor').description('PacketADE actor tokens of the workspace (API key with the admin role).');
  actor
    .command('issue')
    .description(`Issue an actor token; it is printed this once. Give it to the client as ${ADE_TOKEN_VARIABLE}.`)
    .argument('<name>', 'actor name: owns what the token deploys, across tokens of the same name')
    .requiredOption('--operations <list>', `comma-separated: ${ACTOR_OPERATIONS.join(', ')}, or all`, parseOperations)
    .requiredOption('--expires-in <lifetime>', 'how long the token works: 30d, 12h, 90m (at most a year)', parseLifetime)
    .action((name: string, options: { operations: ActorOperation[]; expiresIn: number }, command: Command) =>
      issueActorToken(deps.admin(command), name, { ...options, now: deps.now() }),
    );
  actor
    .command('list')
    .description('List actor tokens: id, actor, state, expiry, last use, operations; never the token.')
    .action((_options: unknown, command: Command) => listActorTokens(deps.admin(command), deps.now()));
  actor
    .command('revoke')
    .description('Revoke an actor token: it is refused from now on.')
    .argument('<id>', 'token id, as issue or list printed it')
    .action((id: string, _options: unknown, command: Command) => revokeActorToken(deps.admin(command), id));

  const publisher = ade.command('publisher').description('Keys whose signed packages the workspace accepts (API key with the admin role).');
  publisher
    .command('trust')
    .description('Trust an Ed25519 public key: packages it signs are accepted.')
    .argument('<name>', 'who holds the key, for people reading the list')
    .argument('<public-key>', 'the public key, PEM (SPKI)')
    .action((name: string, keyFile: string, _options: unknown, command: Command) => trustPublisher(deps.admin(command), name, keyFile));
  publisher
    .command('list')
    .description('List trusted publishers: key id, name, since when.')
    .action((_options: unknown, command: Command) => listPublishers(deps.admin(command)));

  ade
    .command('acknowledge')
    .description('Accept one package signed by a key the workspace does not trust, as validate reported it (API key with the admin role).')
    .argument('<package-digest>', 'the package digest (64 hex digits)')
    .argument('<key-id>', 'the signing key, SHA256:<hex>')
    .option('--note <text>', 'why this package is accepted')
    .action((digest: string, keyId: string, options: { note?: string }, command: Command) => acknowledgePackage(deps.admin(command), digest, keyId, options));
}
