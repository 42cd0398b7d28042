import { Injectable } from '@nestjs/common';
import { CommandBus } from '@packetagent/bus';
import { IntakeCommands, validateStoredDefinition, type WorkerDefinition } from '@packetagent/contracts';
import type { Preflight } from './preflight';
import { WorkerReadiness } from './worker-readiness';

export interface VersionReadiness {
  workerName: string;
  version: number;
  readiness: Preflight;
}

/** The readiness of a stored version (the latest when `version` is null). */
@Injectable()
export class StoredVersionReadiness {
  constructor(
    private readonly bus: CommandBus,
    private readonly readiness: WorkerReadiness,
  ) {}

  async of(workspaceId: string, workerId: string, version: number | null): Promise<VersionReadiness> {
    const number = version ?? (await this.bus.request(IntakeCommands.getWorker, { workspaceId, workerId })).latestVersion;
    const stored = await this.bus.request(IntakeCommands.getVersion, { workspaceId, workerId, version: number });
    const definition: WorkerDefinition = validateStoredDefinition(stored.definition);
    return { workerName: definition.name, version: number, readiness: await this.readiness.of(workspaceId, definition) };
  }
}
