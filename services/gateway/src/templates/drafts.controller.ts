import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { ZodResponse } from 'nestjs-zod';
import { RequirePermission } from '../access/access.decorators';
import { Principal, type WorkspacePrincipal } from '../access/principal';
import { DraftWorkerUseCase } from './draft-worker.usecase';
import { DraftWorkerDto, WorkerDraftDto } from './drafts.dto';

@ApiTags('workers')
@Controller('api/v1/workspaces/:ws/workers')
export class DraftsController {
  constructor(private readonly drafts: DraftWorkerUseCase) {}

  @Post('draft')
  @HttpCode(200)
  @RequirePermission('author')
  @ApiOperation({
    summary: 'Draft a worker definition from a description, for review; nothing is stored',
    description:
      'The selected model (preset default) drafts through structured output, natively where the provider supports it and with the schema in the prompt otherwise; with no model ready a deterministic builder drafts from the templates and the words, labelled "drafted without a model". ' +
      'The draft grants no tool the description did not ask for and is validated like any definition: review its errors and readiness, then save it as a version. Needs the author role.',
  })
  @ZodResponse({ status: 200, type: WorkerDraftDto })
  draft(@Principal() who: WorkspacePrincipal, @Body() body: DraftWorkerDto) {
    return this.drafts.execute({ workspaceId: who.workspaceId, prompt: body.prompt, model: body.model ?? null });
  }
}
