import { Injectable } from '@nestjs/common';
import { CommandBus } from '@packetagent/bus';
import { findTemplate, instantiateTemplate, IntakeCommands, type ActorRef, type TemplateOverrides } from '@packetagent/contracts';
import { WorkerReadiness } from '../readiness/worker-readiness';
import { TemplateNotFoundError } from './template-errors';

/** Creating a version lists its MCP servers' tools to pin them (see WorkersController). */
const APPLY_TIMEOUT_MS = 600_000 + 15_000;

export interface InstantiateTemplate {
  workspaceId: string;
  actor: ActorRef;
  templateId: string;
  name: string;
  overrides: TemplateOverrides;
  demo: boolean;
}

/**
 * A template made into a new worker and its first version in one step: the definition is built
 * and validated here, then intake writes worker and version in one transaction (a name in use is
 * refused, nothing is written for a refused definition). Answers with what the worker still
 * lacks to run here.
 */
@Injectable()
export class InstantiateTemplateUseCase {
  constructor(
    private readonly bus: CommandBus,
    private readonly readiness: WorkerReadiness,
  ) {}

  async execute(command: InstantiateTemplate) {
    const template = findTemplate(command.templateId);
    if (!template) throw new TemplateNotFoundError(command.templateId);
    const instance = instantiateTemplate(template, { name: command.name, overrides: command.overrides, demo: command.demo });
    const applied = await this.bus.request(
      IntakeCommands.applyDefinition,
      { workspaceId: command.workspaceId, actor: command.actor, source: instance.source, format: 'yaml', newWorker: true },
      { timeoutMs: APPLY_TIMEOUT_MS },
    );
    return {
      workerId: applied.workerId,
      workerName: instance.definition.name,
      version: applied.version,
      digest: applied.digest,
      template: { id: template.id, version: template.version },
      demo: command.demo,
      exampleInput: template.demo.input,
      readiness: await this.readiness.of(command.workspaceId, instance.definition),
    };
  }
}
