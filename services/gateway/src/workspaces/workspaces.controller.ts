import { Body, Controller, Get, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ZodResponse } from 'nestjs-zod';
import { Authenticated } from '../access/access.decorators';
import { Principal } from '../access/principal';
import { CreateWorkspaceDto, CreateWorkspaceResultDto } from './usecases/create-workspace/create-workspace.command';
import { CreateWorkspace } from './usecases/create-workspace/create-workspace.usecase';
import { ListWorkspaces, WorkspaceListDto } from './usecases/list-workspaces/list-workspaces.usecase';

@ApiTags('workspaces')
@Controller('api/v1/workspaces')
export class WorkspacesController {
  constructor(
    private readonly createWorkspace: CreateWorkspace,
    private readonly listWorkspaces: ListWorkspaces,
  ) {}

  /** A new workspace; the signed-in caller becomes its owner. */
  @Post()
  @Authenticated({ principals: ['user'] })
  @ZodResponse({ status: 201, type: CreateWorkspaceResultDto })
  create(@Principal() principal: Principal, @Body() body: CreateWorkspaceDto) {
    return this.createWorkspace.execute(principal, body);
  }

  @Get()
  @Authenticated()
  @ZodResponse({ status: 200, type: WorkspaceListDto })
  list(@Principal() principal: Principal) {
    return this.listWorkspaces.execute(principal);
  }
}
