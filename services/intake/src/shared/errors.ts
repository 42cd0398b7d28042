import { DomainError } from '@packetagent/contracts';

export class NotFoundError extends DomainError {
  readonly code = 'not_found';
  constructor(what: string, id: string) {
    super(`${what} ${id} not found`);
  }
}

export class WorkerNameTakenError extends DomainError {
  readonly code = 'worker_name_taken';
  constructor(name: string) {
    super(`a worker named "${name}" already exists in this workspace`);
  }
}

/** A deployment request key already answered a deployment of another worker, version or overrides. */
export class RequestKeyReusedError extends DomainError {
  readonly code = 'idempotency_key_conflict';
  constructor(key: string, deploymentId: string) {
    super(`the idempotency key "${key}" already created deployment ${deploymentId} from a different package; use a new key`);
  }
}

export class DeploymentRevokedError extends DomainError {
  readonly code = 'deployment_revoked';
  constructor(deploymentId: string, reason: string | null) {
    super(`deployment ${deploymentId} is revoked${reason ? `: ${reason}` : ''}; it admits no activations`);
  }
}

export class InvalidTransitionError extends DomainError {
  readonly code = 'invalid_transition';
}

export class PayloadTooLargeError extends DomainError {
  readonly code = 'payload_too_large';
  constructor(bytes: number, limit: number) {
    super(`activation input is ${bytes} bytes; the limit is ${limit} bytes`);
  }
}

export class WebhookRejectedError extends DomainError {
  constructor(
    readonly code: 'webhook_signature_invalid' | 'webhook_timestamp_stale' | 'webhook_replayed',
    message: string,
  ) {
    super(message);
  }
}
