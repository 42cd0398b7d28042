import { DomainError } from '@packetagent/contracts';

export class TemplateNotFoundError extends DomainError {
  readonly code = 'template_not_found';
  constructor(id: string) {
    super(`no template "${id.slice(0, 80)}" (GET .../templates lists them)`);
  }
}

export class WorkerNameTakenError extends DomainError {
  readonly code = 'worker_name_taken';
  constructor(name: string) {
    super(`a worker named "${name}" already exists in this workspace: choose another name`);
  }
}
