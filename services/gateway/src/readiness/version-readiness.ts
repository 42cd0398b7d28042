import { Injectable } from '@nestjs/common';
import { CommandBus } from '@packetagent/bus';
import { IntakeCommands, narrowDefinition, validateStoredDefinition, type WorkerDefinition } from '@packetagent/contracts';
import type { Preflight } from './preflight';
import { WorkerReadiness } from './worker-readiness';

export interface VersionReadiness {
  workerName: string;
  version: number;
  readiness: Preflight;
}

/**
 * The effective definition a deployment with these overrides would run. Overrides intake would
 * refuse leave the version as it is: intake's refusal, not a readiness report, answers them.
 */
function effectiveDefinition(definition: WorkerDefinition, overrides: unknown): WorkerDefinition {
  if (overrides === undefined || overrides === null) return definition;
  try {
    return narrowDefinition(definition, overrides);
  } catch {
    return definition;
  }
}

/** The readiness of a stored version (the latest when `version` is null), with a deployment's overrides applied when given. */
@Injectable()
export class StoredVersionReadiness {
  constructor(
    private readonly bus: CommandBus,
    private readonly readiness: WorkerReadiness,
  ) {}

  async of(workspaceId: string, workerId: string, version: number | null, overrides?: unknown): Promise<VersionReadiness> {
    const number = version ?? (await this.bus.request(IntakeCommands.getWorker, { workspaceId, workerId })).latestVersion;
    const stored = await this.bus.request(IntakeCommands.getVersion, { workspaceId, workerId, version: number });
    const definition = effectiveDefinition(validateStoredDefinition(stored.definition), overrides);
    return { workerName: definition.name, version: number, readiness: await this.readiness.of(workspaceId, definition) };
  }
}
