import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ZodResponse } from 'nestjs-zod';
import { RequirePermission } from '../access/access.decorators';
import { Principal, type WorkspacePrincipal } from '../access/principal';
import { CreateApiKeyDto, CreatedApiKeyDto } from './usecases/create-api-key/create-api-key.command';
import { CreateApiKey } from './usecases/create-api-key/create-api-key.usecase';
import { ApiKeyListDto, ListApiKeys } from './usecases/list-api-keys/list-api-keys.usecase';
import { RevokeApiKey } from './usecases/revoke-api-key/revoke-api-key.usecase';

@ApiTags('api-keys')
@Controller('api/v1/workspaces/:ws/api-keys')
export class ApiKeysController {
  constructor(
    private readonly createApiKey: CreateApiKey,
    private readonly listApiKeys: ListApiKeys,
    private readonly revokeApiKey: RevokeApiKey,
  ) {}

  @Get()
  @RequirePermission('admin')
  @ZodResponse({ status: 200, type: ApiKeyListDto })
  list(@Principal() principal: WorkspacePrincipal) {
    return this.listApiKeys.execute(principal.workspaceId);
  }

  /** A new key for this workspace; the secret is in this answer only. */
  @Post()
  @RequirePermission('admin')
  @ZodResponse({ status: 201, type: CreatedApiKeyDto })
  create(@Principal() principal: WorkspacePrincipal, @Body() body: CreateApiKeyDto) {
    return this.createApiKey.execute(principal, body);
  }

  @Delete(':id')
  @RequirePermission('admin')
  @HttpCode(204)
  revoke(@Principal() principal: WorkspacePrincipal, @Param('id') id: string): Promise<void> {
    return this.revokeApiKey.execute(principal, id);
  }
}
