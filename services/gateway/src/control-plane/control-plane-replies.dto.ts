import { createZodDto } from 'nestjs-zod';
import { IntakeCommands } from '@packetagent/contracts';
import { Readiness } from '../readiness/readiness.dto';

/** The answers of the control-plane routes: intake's replies as they are, so the document says what the routes send. */
export class CreatedWorkerDto extends createZodDto(IntakeCommands.createWorker.response) {}
export class WorkerPageDto extends createZodDto(IntakeCommands.listWorkers.response) {}
export class WorkerDto extends createZodDto(IntakeCommands.getWorker.response) {}
export class AppliedDefinitionDto extends createZodDto(IntakeCommands.applyDefinition.response) {}
export class CreatedVersionDto extends createZodDto(IntakeCommands.createVersion.response) {}
export class VersionListDto extends createZodDto(IntakeCommands.listVersions.response) {}
export class VersionDto extends createZodDto(IntakeCommands.getVersion.response) {}

/** Intake's reply and, beside it, the readiness the version was checked against before anything was armed. */
export class CreatedDeploymentDto extends createZodDto(IntakeCommands.createDeployment.response.extend({ readiness: Readiness })) {}
export class DeploymentPageDto extends createZodDto(IntakeCommands.listDeployments.response) {}
export class DeploymentDto extends createZodDto(IntakeCommands.getDeployment.response) {}
/** A control's answer: the deployment after it, with the webhook secrets of any trigger a rollback created. */
export class ControlledDeploymentDto extends createZodDto(IntakeCommands.controlDeployment.response) {}

/** An activation's answer, whatever started it (manual, webhook): the run it made, or found for a key seen before. */
export class ActivationDto extends createZodDto(IntakeCommands.activate.response) {}
export class AlertsIngestedDto extends createZodDto(IntakeCommands.ingestAlerts.response) {}

export class RunPageDto extends createZodDto(IntakeCommands.listRuns.response) {}
/** A run as read, and as stop, pause and resume leave it. */
export class RunDto extends createZodDto(IntakeCommands.getRun.response) {}
