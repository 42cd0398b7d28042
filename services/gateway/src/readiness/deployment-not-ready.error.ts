import { ValidationError } from '@packetagent/contracts';
import type { MissingRequirement } from './preflight';

/** A deployment refused because what it needs is missing; `errors` names each missing thing. */
export class DeploymentNotReadyError extends ValidationError {
  override readonly code = 'deployment_not_ready';
  /** The problem's detail. */
  readonly summary: string;

  constructor(workerName: string, missing: readonly MissingRequirement[]) {
    const summary = `worker ${workerName} cannot run here yet: ${missing.length} requirement${missing.length === 1 ? '' : 's'} missing (deploy with acceptMissing: true to deploy it anyway)`;
    super(
      summary,
      missing.map((item) => ({ path: `${item.kind}s.${item.name}`, message: item.reason })),
    );
    this.summary = summary;
  }
}
