import { DomainError } from '@packetagent/contracts';

/** A run with more events than one bundle carries; the export would hold the whole run in memory. */
export class EvidenceTooLargeError extends DomainError {
  readonly code = 'evidence_too_large';
  constructor(events: number, limit: number) {
    super(`the run's evidence holds ${events} events, more than the ${limit} one bundle carries`);
  }
}

/** A run whose referenced payloads add up to more than one bundle carries. */
export class EvidencePayloadsTooLargeError extends DomainError {
  readonly code = 'evidence_too_large';
  constructor(bytes: number, limit: number) {
    super(`the run's events reference ${bytes} bytes of payloads, more than the ${limit} one bundle carries`);
  }
}
