import { Injectable } from '@nestjs/common';
import { CommandBus } from '@packetagent/bus';
import { canonicalJson, DomainError, IntakeCommands, type JsonValue, type PackageDocument } from '@packetagent/contracts';
import { NotFoundError } from '../../identity/errors';
import type { ActorPrincipal } from '../actors/actor-principal';
import { PackageWorkerMismatchError } from './actor-errors';
import { ActorCalls, type DoorTransport } from './actor-calls';
import { ActorDeployments } from './actor-deployments';
import { PackageCheck, type SignatureVerdict } from './package-check';
import { PackagePreflight, type Preflight } from '../../readiness/preflight';

/** Creating a version pins its MCP servers' tools; as long as the REST route allows. */
const CREATE_VERSION_TIMEOUT_MS = 600_000 + 15_000;

export interface ValidationReport {
  packageDigest: string;
  workerName: string;
  signed: boolean;
  signatures: SignatureVerdict[];
  /** Whether this workspace would accept the package's signer; `refusal` says why not. */
  accepted: boolean;
  refusal: { code: string; detail: string } | null;
  requires: { providers: string[]; tools: string[]; credentials: string[] };
  preflight: Preflight;
}

/** What a deploy or an update did, binding the package to what runs it. */
export interface DeployReceipt {
  packageDigest: string;
  workerId: string;
  workerName: string;
  version: number;
  versionDigest: string;
  deploymentId: string;
  /** A new deployment (deploy) or a new version deployed (update); false for a repeat. */
  created: boolean;
  signedBy: string[];
  /** Webhook secrets of a new deployment's triggers, in this answer only. */
  webhooks: Array<{ triggerId: string; secret: string }>;
}

export type DeploymentAction = 'pause' | 'resume' | 'rollback' | 'revoke';

/**
 * The PacketADE operations, one implementation behind both REST and gRPC. Each call is checked
 * against the token's operations and recorded (ActorCalls); deployments are the actor's own
 * (ActorDeployments); the work itself is intake's, through the same commands the console uses.
 * A package document is read inside the call (`read`), so a token without the operation is
 * refused as such, and recorded, whatever it sent.
 */
@Injectable()
export class PacketAdeDoor {
  constructor(
    private readonly bus: CommandBus,
    private readonly calls: ActorCalls,
    private readonly deployments: ActorDeployments,
    private readonly packages: PackageCheck,
    private readonly preflight: PackagePreflight,
  ) {}

  validate(who: ActorPrincipal, transport: DoorTransport, read: () => PackageDocument): Promise<ValidationReport> {
    return this.calls.run(who, 'validate', transport, {}, async (refs) => {
      const checked = await this.packages.check(who.workspaceId, read());
      refs.packageDigest = checked.parsed.digest;
      const requires = checked.parsed.package.requires;
      return {
        packageDigest: checked.parsed.digest,
        workerName: checked.parsed.definition.name,
        signed: checked.signed,
        signatures: checked.signatures,
        accepted: checked.refusal === null,
        refusal: checked.refusal ? { code: checked.refusal.code, detail: checked.refusal.message } : null,
        requires,
        preflight: await this.preflight.run(who.workspaceId, checked.parsed.definition, requires),
      };
    });
  }

  /**
   * Worker (found or created by the definition's name), version and deployment. Idempotent: the
   * request key is the client's idempotency key, or the package digest without one, so the same
   * package deployed again answers the same deployment, and a key reused for another package is
   * refused (409 idempotency_key_conflict).
   */
  deploy(who: ActorPrincipal, transport: DoorTransport, read: () => { document: PackageDocument; idempotencyKey: string | null }): Promise<DeployReceipt> {
    return this.calls.run(who, 'deploy', transport, {}, async (refs) => {
      const { document, idempotencyKey } = read();
      const checked = await this.accepted(who, document);
      refs.packageDigest = checked.digest;
      const worker = await this.bus.request(IntakeCommands.ensureWorker, {
        workspaceId: who.workspaceId,
        actor: who.actor,
        name: checked.definition.name,
        description: checked.definition.description ?? '',
      });
      const version = await this.createVersion(who, worker.id, checked.worker);
      const deployment = await this.bus.request(IntakeCommands.createDeployment, {
        workspaceId: who.workspaceId,
        actor: who.actor,
        workerId: worker.id,
        version: version.version,
        overrides: {},
        requestKey: `ade:${who.actorName}:${idempotencyKey === null ? `package:${checked.digest}` : `key:${idempotencyKey}`}`,
      });
      refs.deploymentId = deployment.id;
      await this.deployments.record(who, deployment.id, worker.id, checked.digest);
      return {
        packageDigest: checked.digest,
        workerId: worker.id,
        workerName: deployment.workerName,
        version: deployment.version,
        versionDigest: deployment.digest,
        deploymentId: deployment.id,
        created: deployment.created,
        signedBy: checked.signedBy,
        webhooks: deployment.webhooks,
      };
    });
  }

  /** A new version of the deployment's worker from the package, and the deployment moved to it; the same package again changes nothing. */
  update(who: ActorPrincipal, transport: DoorTransport, deploymentId: string, read: () => PackageDocument): Promise<DeployReceipt> {
    return this.calls.run(who, 'update', transport, { deploymentId }, async (refs) => {
      await this.deployments.assertOwned(who, deploymentId);
      const checked = await this.accepted(who, read());
      refs.packageDigest = checked.digest;
      const current = await this.bus.request(IntakeCommands.getDeployment, { workspaceId: who.workspaceId, deploymentId });
      if (current.workerName !== checked.definition.name) throw new PackageWorkerMismatchError(current.workerName, checked.definition.name);
      const version = await this.createVersion(who, current.workerId, checked.worker);
      const moved = version.version > current.version;
      const after = moved
        ? await this.bus.request(IntakeCommands.controlDeployment, {
            workspaceId: who.workspaceId,
            actor: who.actor,
            deploymentId,
            action: 'update',
            version: version.version,
            reason: `PacketADE ${who.actorName}: package ${checked.digest}`,
          })
        : current;
      await this.deployments.record(who, deploymentId, current.workerId, checked.digest);
      return {
        packageDigest: checked.digest,
        workerId: current.workerId,
        workerName: current.workerName,
        version: after.version,
        versionDigest: after.digest,
        deploymentId,
        created: moved,
        signedBy: checked.signedBy,
        webhooks: [],
      };
    });
  }

  /** A manual run; the idempotency key (a new one when absent) makes a retry answer the same run. */
  activate(who: ActorPrincipal, transport: DoorTransport, deploymentId: string, input: JsonValue | null, idempotencyKey: string) {
    return this.calls.run(who, 'activate', transport, { deploymentId }, async (refs) => {
      await this.deployments.assertOwned(who, deploymentId);
      const result = await this.bus.request(IntakeCommands.activate, {
        workspaceId: who.workspaceId,
        actor: who.actor,
        deploymentId,
        source: 'manual',
        dedupeKey: `ade:${who.actorName}:${idempotencyKey}`,
        input,
        details: { idempotencyKey, actorName: who.actorName },
      });
      refs.runId = result.runId;
      return result;
    });
  }

  inspect(who: ActorPrincipal, transport: DoorTransport, deploymentId: string) {
    return this.calls.run(who, 'inspect', transport, { deploymentId }, async () => {
      await this.deployments.assertOwned(who, deploymentId);
      return this.bus.request(IntakeCommands.getDeployment, { workspaceId: who.workspaceId, deploymentId });
    });
  }

  /** One run of the actor's deployments; a run of any other deployment answers 404 like none. */
  getRun(who: ActorPrincipal, transport: DoorTransport, runId: string) {
    return this.calls.run(who, 'inspect', transport, { runId }, async (refs) => {
      if (!ActorDeployments.isId(runId)) throw new NotFoundError('no such run');
      const run = await this.bus.request(IntakeCommands.getRun, { workspaceId: who.workspaceId, runId }).catch((error: unknown) => {
        throw error instanceof DomainError && error.code.endsWith('not_found') ? new NotFoundError('no such run') : error;
      });
      await this.deployments.assertOwned(who, run.deploymentId).catch(() => {
        throw new NotFoundError('no such run');
      });
      refs.deploymentId = run.deploymentId;
      return run;
    });
  }

  listRuns(who: ActorPrincipal, transport: DoorTransport, deploymentId: string, cursor: string | null, limit: number) {
    return this.calls.run(who, 'list_runs', transport, { deploymentId }, async () => {
      await this.deployments.assertOwned(who, deploymentId);
      return this.bus.request(IntakeCommands.listRuns, { workspaceId: who.workspaceId, deploymentId, state: null, cursor, limit });
    });
  }

  control(who: ActorPrincipal, transport: DoorTransport, deploymentId: string, action: DeploymentAction, reason: string | null, version: number | null) {
    return this.calls.run(who, action, transport, { deploymentId }, async () => {
      await this.deployments.assertOwned(who, deploymentId);
      return this.bus.request(IntakeCommands.controlDeployment, { workspaceId: who.workspaceId, actor: who.actor, deploymentId, action, version, reason });
    });
  }

  private async accepted(who: ActorPrincipal, document: PackageDocument) {
    const checked = await this.packages.check(who.workspaceId, document);
    if (checked.refusal) throw checked.refusal;
    return {
      digest: checked.parsed.digest,
      definition: checked.parsed.definition,
      worker: checked.parsed.package.worker,
      signedBy: checked.signatures.filter((signature) => signature.trusted || signature.acknowledged).map((signature) => signature.keyId),
    };
  }

  private createVersion(who: ActorPrincipal, workerId: string, worker: JsonValue) {
    return this.bus.request(
      IntakeCommands.createVersion,
      { workspaceId: who.workspaceId, actor: who.actor, workerId, source: canonicalJson(worker), format: 'json' },
      { timeoutMs: CREATE_VERSION_TIMEOUT_MS },
    );
  }
}
