import { Injectable } from '@nestjs/common';
import { derivePackageRequirements, templateScript, type WorkerDefinition } from '@packetagent/contracts';
import { PackagePreflight, type Preflight } from './preflight';

/**
 * What a worker definition needs that the workspace or this server lacks now: the preflight of
 * a package, for a definition as written. A template's demo script ships with the product, so
 * its scripted model needs no scripts directory.
 */
@Injectable()
export class WorkerReadiness {
  constructor(private readonly preflight: PackagePreflight) {}

  of(workspaceId: string, definition: WorkerDefinition): Promise<Preflight> {
    const requires = derivePackageRequirements(definition);
    const model = definition.model;
    const shipped = 'provider' in model && model.provider === 'scripted' && templateScript(model.model) !== undefined;
    return this.preflight.run(workspaceId, definition, { ...requires, providers: shipped ? [] : requires.providers });
  }
}
