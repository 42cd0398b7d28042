import { Injectable } from '@nestjs/common';
import type { z } from 'zod';
import { IntakeCommands } from '@packetagent/contracts';
import { OnCommand } from '@packetagent/bus';
import { IngestAlertsUseCase } from './alerts/ingest-alerts';
import { ControlDeploymentUseCase } from './deployments/usecases/control-deployment';
import { CreateDeploymentUseCase } from './deployments/usecases/create-deployment';
import { ReadDeploymentsUseCase } from './deployments/usecases/read-deployments';
import { ActivateUseCase } from './runs/usecases/activate';
import { ReadRunsUseCase } from './runs/usecases/read-runs';
import { PauseRunUseCase } from './runs/usecases/pause-run';
import { StopRunUseCase } from './runs/usecases/stop-run';
import { DeliverWebhookUseCase } from './webhooks/deliver-webhook';
import { ApplyDefinitionUseCase } from './workers/usecases/apply-definition';
import { CreateVersionUseCase } from './workers/usecases/create-version';
import { CreateWorkerUseCase } from './workers/usecases/create-worker';
import { ReadWorkersUseCase } from './workers/usecases/read-workers';

type Request<K extends keyof typeof IntakeCommands> = z.output<(typeof IntakeCommands)[K]['request']>;

/** Intake's command surface over NATS request/reply: one line per command. */
@Injectable()
export class IntakeCommandHandlers {
  constructor(
    private readonly createWorkerUseCase: CreateWorkerUseCase,
    private readonly createVersionUseCase: CreateVersionUseCase,
    private readonly applyDefinitionUseCase: ApplyDefinitionUseCase,
    private readonly workers: ReadWorkersUseCase,
    private readonly createDeploymentUseCase: CreateDeploymentUseCase,
    private readonly controlDeploymentUseCase: ControlDeploymentUseCase,
    private readonly deployments: ReadDeploymentsUseCase,
    private readonly activateUseCase: ActivateUseCase,
    private readonly deliverWebhookUseCase: DeliverWebhookUseCase,
    private readonly ingestAlertsUseCase: IngestAlertsUseCase,
    private readonly runs: ReadRunsUseCase,
    private readonly stopRunUseCase: StopRunUseCase,
    private readonly pauseRunUseCase: PauseRunUseCase,
  ) {}

  @OnCommand(IntakeCommands.createWorker)
  createWorker(request: Request<'createWorker'>) {
    return this.createWorkerUseCase.execute(request);
  }

  @OnCommand(IntakeCommands.ensureWorker)
  ensureWorker(request: Request<'ensureWorker'>) {
    return this.createWorkerUseCase.ensure(request);
  }

  @OnCommand(IntakeCommands.listWorkers)
  listWorkers(request: Request<'listWorkers'>) {
    return this.workers.list(request);
  }

  @OnCommand(IntakeCommands.getWorker)
  getWorker(request: Request<'getWorker'>) {
    return this.workers.get(request.workspaceId, request.workerId);
  }

  @OnCommand(IntakeCommands.createVersion)
  createVersion(request: Request<'createVersion'>) {
    return this.createVersionUseCase.execute(request);
  }

  @OnCommand(IntakeCommands.applyDefinition)
  applyDefinition(request: Request<'applyDefinition'>) {
    return this.applyDefinitionUseCase.execute(request);
  }

  @OnCommand(IntakeCommands.listVersions)
  listVersions(request: Request<'listVersions'>) {
    return this.workers.versions(request.workspaceId, request.workerId);
  }

  @OnCommand(IntakeCommands.getVersion)
  getVersion(request: Request<'getVersion'>) {
    return this.workers.version(request.workspaceId, request.workerId, request.version);
  }

  @OnCommand(IntakeCommands.createDeployment)
  createDeployment(request: Request<'createDeployment'>) {
    return this.createDeploymentUseCase.execute(request);
  }

  @OnCommand(IntakeCommands.listDeployments)
  listDeployments(request: Request<'listDeployments'>) {
    return this.deployments.list(request);
  }

  @OnCommand(IntakeCommands.getDeployment)
  getDeployment(request: Request<'getDeployment'>) {
    return this.deployments.get(request.workspaceId, request.deploymentId);
  }

  @OnCommand(IntakeCommands.controlDeployment)
  controlDeployment(request: Request<'controlDeployment'>) {
    return this.controlDeploymentUseCase.execute(request);
  }

  @OnCommand(IntakeCommands.activate)
  activate(request: Request<'activate'>) {
    return this.activateUseCase.execute(request);
  }

  @OnCommand(IntakeCommands.deliverWebhook)
  deliverWebhook(request: Request<'deliverWebhook'>) {
    return this.deliverWebhookUseCase.execute(request);
  }

  @OnCommand(IntakeCommands.ingestAlerts)
  ingestAlerts(request: Request<'ingestAlerts'>) {
    return this.ingestAlertsUseCase.execute(request);
  }

  @OnCommand(IntakeCommands.getRun)
  getRun(request: Request<'getRun'>) {
    return this.runs.get(request.workspaceId, request.runId);
  }

  @OnCommand(IntakeCommands.getPayload)
  getPayload(request: Request<'getPayload'>) {
    return this.runs.payload(request.workspaceId, request.payloadId);
  }

  @OnCommand(IntakeCommands.listRuns)
  listRuns(request: Request<'listRuns'>) {
    return this.runs.list(request);
  }

  @OnCommand(IntakeCommands.stopRun)
  stopRun(request: Request<'stopRun'>) {
    return this.stopRunUseCase.execute(request);
  }

  @OnCommand(IntakeCommands.pauseRun)
  pauseRun(request: Request<'pauseRun'>) {
    return this.pauseRunUseCase.execute({ ...request, pause: true });
  }

  @OnCommand(IntakeCommands.resumeRun)
  resumeRun(request: Request<'resumeRun'>) {
    return this.pauseRunUseCase.execute({ ...request, pause: false, reason: null });
  }
}
