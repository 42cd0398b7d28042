import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ZodResponse } from 'nestjs-zod';
import { findTemplate, WORKER_TEMPLATES } from '@packetagent/contracts';
import { RequirePermission } from '../access/access.decorators';
import { Principal, type WorkspacePrincipal } from '../access/principal';
import { WorkerReadiness } from '../readiness/worker-readiness';
import { InstantiateTemplateUseCase } from './instantiate-template.usecase';
import { TemplateNotFoundError } from './template-errors';
import { templateDefinition, templateSummary } from './template-views';
import { InstantiatedTemplateDto, InstantiateTemplateDto, TemplateDetailDto, TemplateListDto } from './templates.dto';

@ApiTags('templates')
@Controller('api/v1/workspaces/:ws/templates')
export class TemplatesController {
  constructor(
    private readonly instantiation: InstantiateTemplateUseCase,
    private readonly readiness: WorkerReadiness,
  ) {}

  @Get()
  @RequirePermission('inspect')
  @ApiOperation({ summary: 'The starter templates shipped with this server', description: 'Six starters, each a versioned definition with a scripted demo that runs without a model key. Any member of the workspace may list them.' })
  @ZodResponse({ status: 200, type: TemplateListDto })
  list() {
    return { items: WORKER_TEMPLATES.map(templateSummary) };
  }

  @Get(':id')
  @RequirePermission('inspect')
  @ApiOperation({ summary: 'One template: its definition as shipped, its demo, and what this workspace lacks to run it', description: 'The readiness names each credential, provider, tool or computer the template needs that the workspace or this server lacks now.' })
  @ZodResponse({ status: 200, type: TemplateDetailDto })
  async get(@Principal() who: WorkspacePrincipal, @Param('id') id: string) {
    const template = findTemplate(id);
    if (!template) throw new TemplateNotFoundError(id);
    return {
      ...templateSummary(template),
      definition: template.definition,
      demo: { tools: [...template.demo.tools], input: template.demo.input },
      readiness: await this.readiness.of(who.workspaceId, templateDefinition(template)),
    };
  }

  @Post(':id/instantiate')
  @HttpCode(201)
  @RequirePermission('author')
  @ApiOperation({
    summary: 'Make a new worker from a template',
    description:
      'Creates the worker `name` and its first version from the template, each key of `overrides` replacing that field of the definition whole; with `demo: true`, the scripted demo. ' +
      'Validated like any definition (400 with every issue at its path, nothing written); a name in use answers 409 `worker_name_taken`. Needs the author role.',
  })
  @ZodResponse({ status: 201, type: InstantiatedTemplateDto })
  instantiate(@Principal() who: WorkspacePrincipal, @Param('id') id: string, @Body() body: InstantiateTemplateDto) {
    return this.instantiation.execute({ workspaceId: who.workspaceId, actor: who.actor, templateId: id, name: body.name, overrides: body.overrides, demo: body.demo });
  }
}
