import { Injectable } from '@nestjs/common';
import { CommandBus } from '@packetagent/bus';
import {
  canonicalDefinition,
  DomainError,
  IntakeCommands,
  narrowDefinition,
  parsePayload,
  validateStoredDefinition,
  type JsonValue,
  type RunPin,
  type WorkerDefinition,
} from '@packetagent/contracts';
import { PayloadNotFoundError, PayloadStore } from '@packetagent/eventstore';
import { withRetries } from './retry';

export class DefinitionMismatchError extends DomainError {
  readonly code = 'definition_mismatch';
}

const CACHE_LIMIT = 256;

/**
 * The effective definition a run is pinned to: its version narrowed by its deployment's
 * overrides, checked against the effective digest recorded at admission. A definition that
 * does not hash to the pin is refused, never run.
 */
@Injectable()
export class RunDefinitions {
  private readonly cache = new Map<string, WorkerDefinition>();

  constructor(
    private readonly commands: CommandBus,
    private readonly payloads: PayloadStore,
  ) {}

  /**
   * One verified read of the payload store, where intake keeps every deployment's effective
   * definition under its digest; a deployment made before it did is asked of intake (and kept).
   */
  async load(workspaceId: string, pin: RunPin, signal: AbortSignal): Promise<WorkerDefinition> {
    const key = `${workspaceId}:${pin.deploymentId}:${pin.effectiveDigest}`;
    const cached = this.cache.get(key);
    if (cached) return cached;
    const effective = (await this.stored(workspaceId, pin.effectiveDigest)) ?? (await this.fromIntake(workspaceId, pin, signal));
    if (this.cache.size >= CACHE_LIMIT) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, effective);
    return effective;
  }

  private async stored(workspaceId: string, effectiveDigest: string): Promise<WorkerDefinition | null> {
    try {
      // Content-addressed: what comes back hashes to the pin, or the read fails.
      return validateStoredDefinition(parsePayload(await this.payloads.get(workspaceId, effectiveDigest)));
    } catch (error) {
      if (error instanceof PayloadNotFoundError) return null;
      throw error;
    }
  }

  private async fromIntake(workspaceId: string, pin: RunPin, signal: AbortSignal): Promise<WorkerDefinition> {
    const [version, deployment] = await Promise.all([
      withRetries(() => this.commands.request(IntakeCommands.getVersion, { workspaceId, workerId: pin.workerId, version: pin.version }), signal),
      withRetries(() => this.commands.request(IntakeCommands.getDeployment, { workspaceId, deploymentId: pin.deploymentId }), signal),
    ]);
    if (version.digest !== pin.digest) {
      throw new DefinitionMismatchError(`version ${pin.version} has digest ${version.digest}, the run was admitted with ${pin.digest}`);
    }
    const effective = narrowDefinition(validateStoredDefinition(version.definition), deployment.overrides ?? {});
    const digest = canonicalDefinition(effective).digest;
    if (digest !== pin.effectiveDigest) {
      throw new DefinitionMismatchError(`the effective definition hashes to ${digest}, the run was admitted with ${pin.effectiveDigest}`);
    }
    await this.payloads.putJson(workspaceId, effective as unknown as JsonValue);
    return effective;
  }

  /** The activation's input, fetched from intake when it was stored by reference. */
  async input(workspaceId: string, activation: { input: JsonValue; inputRef: { payloadId: string; digest: string } | null }, signal: AbortSignal): Promise<JsonValue> {
    if (!activation.inputRef) return activation.input;
    const payload = await withRetries(() => this.commands.request(IntakeCommands.getPayload, { workspaceId, payloadId: activation.inputRef!.payloadId }), signal);
    if (payload.digest !== activation.inputRef.digest) {
      throw new DefinitionMismatchError(`stored input ${payload.payloadId} does not match the digest recorded at activation`);
    }
    return payload.content as JsonValue;
  }
}
