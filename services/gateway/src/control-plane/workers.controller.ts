import { Body, Controller, Get, Headers, HttpCode, Param, ParseIntPipe, Post, Query } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiTags } from '@nestjs/swagger';
import { ZodResponse } from 'nestjs-zod';
import { IntakeCommands } from '@packetagent/contracts';
import { CommandBus } from '@packetagent/bus';
import { RequirePermission } from '../access/access.decorators';
import { Principal, type WorkspacePrincipal } from '../access/principal';
import { CreateWorkerDto, PageQueryDto } from './control-plane.dto';
import { AppliedDefinitionDto, CreatedVersionDto, CreatedWorkerDto, VersionDto, VersionListDto, WorkerDto, WorkerPageDto } from './control-plane-replies.dto';
import { definitionSource } from './definition-body';


/** Creating a version lists its MCP servers' tools to pin them: as long as the slowest server's limit (at most 10 min) allows, plus intake's margin. */
const CREATE_VERSION_TIMEOUT_MS = 600_000 + 15_000;

@ApiTags('workers')
@Controller('api/v1/workspaces/:ws/workers')
export class WorkersController {
  constructor(private readonly bus: CommandBus) {}

  @Post()
  @RequirePermission('author')
  @ZodResponse({ status: 201, type: CreatedWorkerDto })
  create(@Principal() who: WorkspacePrincipal, @Body() body: CreateWorkerDto) {
    return this.bus.request(IntakeCommands.createWorker, { workspaceId: who.workspaceId, actor: who.actor, ...body });
  }

  @Get()
  @RequirePermission('inspect')
  @ZodResponse({ status: 200, type: WorkerPageDto })
  list(@Principal() who: WorkspacePrincipal, @Query() query: PageQueryDto) {
    return this.bus.request(IntakeCommands.listWorkers, { workspaceId: who.workspaceId, cursor: query.cursor ?? null, limit: query.limit });
  }

  @Get(':workerId')
  @RequirePermission('inspect')
  @ZodResponse({ status: 200, type: WorkerDto })
  get(@Principal() who: WorkspacePrincipal, @Param('workerId') workerId: string) {
    return this.bus.request(IntakeCommands.getWorker, { workspaceId: who.workspaceId, workerId });
  }

  /**
   * The worker the definition names (created when absent) and the definition as its next version,
   * in one step: a refused definition creates nothing. The body is as for `:workerId/versions`.
   */
  @Post('apply')
  @HttpCode(201)
  @RequirePermission('author')
  @ApiConsumes('application/json', 'application/yaml')
  @ApiBody({ description: 'A worker definition (apiVersion packetagent/v1, kind Worker)', schema: { type: 'object' } })
  @ZodResponse({ status: 201, type: AppliedDefinitionDto })
  apply(@Principal() who: WorkspacePrincipal, @Headers('content-type') contentType: string | undefined, @Body() body: unknown) {
    return this.bus.request(IntakeCommands.applyDefinition, { workspaceId: who.workspaceId, actor: who.actor, ...definitionSource(contentType, body) }, { timeoutMs: CREATE_VERSION_TIMEOUT_MS });
  }

  /** The body is the definition itself: JSON, or YAML with Content-Type application/yaml. */
  @Post(':workerId/versions')
  @HttpCode(201)
  @RequirePermission('author')
  @ApiConsumes('application/json', 'application/yaml')
  @ApiBody({ description: 'A worker definition (apiVersion packetagent/v1, kind Worker)', schema: { type: 'object' } })
  @ZodResponse({ status: 201, type: CreatedVersionDto })
  createVersion(
    @Principal() who: WorkspacePrincipal,
    @Param('workerId') workerId: string,
    @Headers('content-type') contentType: string | undefined,
    @Body() body: unknown,
  ) {
    return this.bus.request(IntakeCommands.createVersion, { workspaceId: who.workspaceId, actor: who.actor, workerId, ...definitionSource(contentType, body) }, { timeoutMs: CREATE_VERSION_TIMEOUT_MS });
  }

  @Get(':workerId/versions')
  @RequirePermission('inspect')
  @ZodResponse({ status: 200, type: VersionListDto })
  versions(@Principal() who: WorkspacePrincipal, @Param('workerId') workerId: string) {
    return this.bus.request(IntakeCommands.listVersions, { workspaceId: who.workspaceId, workerId });
  }

  @Get(':workerId/versions/:version')
  @RequirePermission('inspect')
  @ZodResponse({ status: 200, type: VersionDto })
  version(@Principal() who: WorkspacePrincipal, @Param('workerId') workerId: string, @Param('version', ParseIntPipe) version: number) {
    return this.bus.request(IntakeCommands.getVersion, { workspaceId: who.workspaceId, workerId, version });
  }
}
