import { Body, Controller, Delete, Get, HttpCode, Param, Put } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ZodResponse } from 'nestjs-zod';
import { VaultCommands } from '@packetagent/contracts';
import { CommandBus } from '@packetagent/bus';
import { RequirePermission } from '../access/access.decorators';
import { Principal, type WorkspacePrincipal } from '../access/principal';
import { CredentialListDto, CredentialMetadataDto, PutCredentialDto } from './credentials.dto';

/**
 * Credentials are write-only over the API: a value goes in with PUT and never comes back out;
 * reading one takes a single-use grant from policy, which only the supervisor redeems.
 */
@ApiTags('credentials')
@Controller('api/v1/workspaces/:ws/credentials')
export class CredentialsController {
  constructor(private readonly bus: CommandBus) {}

  /** Stores a new version; the answer is its metadata. */
  @Put(':name')
  @RequirePermission('admin')
  @ZodResponse({ status: 200, type: CredentialMetadataDto })
  put(@Principal() who: WorkspacePrincipal, @Param('name') name: string, @Body() body: PutCredentialDto) {
    return this.bus.request(VaultCommands.putCredential, { workspaceId: who.workspaceId, name, value: body.value, actor: who.actor });
  }

  @Get()
  @RequirePermission('inspect')
  @ZodResponse({ status: 200, type: CredentialListDto })
  list(@Principal() who: WorkspacePrincipal) {
    return this.bus.request(VaultCommands.listCredentials, { workspaceId: who.workspaceId });
  }

  @Delete(':name')
  @HttpCode(204)
  @RequirePermission('admin')
  async delete(@Principal() who: WorkspacePrincipal, @Param('name') name: string): Promise<void> {
    await this.bus.request(VaultCommands.deleteCredential, { workspaceId: who.workspaceId, name, actor: who.actor });
  }
}
