import { DomainError, type ActorOperation } from '@packetagent/contracts';
import { PermissionDeniedError } from '../../identity/errors';

/** The token is valid but its operations do not include this one. */
export class OperationNotGrantedError extends PermissionDeniedError {
  constructor(operation: ActorOperation) {
    super(`this actor token does not allow "${operation}"`);
  }
}

/** An update carrying a package of another worker than the deployment's. */
export class PackageWorkerMismatchError extends DomainError {
  readonly code = 'package_worker_mismatch';
  constructor(deploymentWorker: string, packageWorker: string) {
    super(`the deployment runs worker "${deploymentWorker}" and the package is of worker "${packageWorker}": deploy it as a new deployment instead`);
  }
}
