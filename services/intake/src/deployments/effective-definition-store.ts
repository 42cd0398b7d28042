import { Injectable } from '@nestjs/common';
import { payloadContent, type JsonValue, type WorkerDefinition } from '@packetagent/contracts';
import { PayloadStore } from '@packetagent/eventstore';

/**
 * A deployment's effective definition, stored content-addressed under its effective digest, so
 * the supervisor resolves what a run was admitted with in one verified read, without asking
 * intake again. Idempotent: the same definition is the same content.
 */
@Injectable()
export class EffectiveDefinitionStore {
  constructor(private readonly payloads: PayloadStore) {}

  async keep(workspaceId: string, effective: WorkerDefinition, effectiveDigest: string): Promise<void> {
    const content = payloadContent(effective as unknown as JsonValue);
    // The effective digest is the SHA-256 of the same canonical JSON; anything else is a bug, never stored under the pin.
    if (content.digest !== effectiveDigest) throw new Error(`the effective definition hashes to ${content.digest}, not ${effectiveDigest}`);
    await this.payloads.put(workspaceId, content);
  }
}
