import { Body, Controller, Get, Headers, HttpCode, Param, ParseIntPipe, Post } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ZodResponse } from 'nestjs-zod';
import { parseWorkerDefinition } from '@packetagent/contracts';
import { RequirePermission } from '../access/access.decorators';
import { Principal, type WorkspacePrincipal } from '../access/principal';
import { definitionSource } from '../control-plane/definition-body';
import { DefinitionReadinessDto, ReadinessDto } from './readiness.dto';
import { StoredVersionReadiness } from './version-readiness';
import { WorkerReadiness } from './worker-readiness';

@ApiTags('workers')
@Controller('api/v1/workspaces/:ws/workers')
export class ReadinessController {
  constructor(
    private readonly readiness: WorkerReadiness,
    private readonly versions: StoredVersionReadiness,
  ) {}

  @Post('readiness')
  @HttpCode(200)
  @RequirePermission('author')
  @ApiConsumes('application/json', 'application/yaml')
  @ApiBody({ description: 'A worker definition (apiVersion packetagent/v1, kind Worker), JSON or YAML', schema: { type: 'object' } })
  @ApiOperation({
    summary: 'Check a definition before saving it: every validation issue at its path, or what it would lack to run here',
    description: 'Writes nothing. An invalid definition answers 400 with every issue at its path; a valid one 200 with the credentials, providers, tools and computers it needs that the workspace or this server lacks now.',
  })
  @ZodResponse({ status: 200, type: DefinitionReadinessDto })
  async check(@Principal() who: WorkspacePrincipal, @Headers('content-type') contentType: string | undefined, @Body() body: unknown) {
    const { source, format } = definitionSource(contentType, body);
    const definition = parseWorkerDefinition(source, format);
    return { name: definition.name, readiness: await this.readiness.of(who.workspaceId, definition) };
  }

  @Get(':workerId/versions/:version/readiness')
  @RequirePermission('inspect')
  @ApiOperation({ summary: 'What a version would lack to run here, before deploying it', description: 'Deploying a version that lacks something is refused with 422 `deployment_not_ready` unless the request says `acceptMissing: true`.' })
  @ZodResponse({ status: 200, type: ReadinessDto })
  async version(@Principal() who: WorkspacePrincipal, @Param('workerId') workerId: string, @Param('version', ParseIntPipe) version: number) {
    return (await this.versions.of(who.workspaceId, workerId, version)).readiness;
  }
}
