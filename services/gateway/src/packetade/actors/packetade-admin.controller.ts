import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ZodResponse } from 'nestjs-zod';
import { RequirePermission } from '../../access/access.decorators';
import { Principal, type WorkspacePrincipal } from '../../access/principal';
import { AcknowledgePackageDto, PublisherDto, PublisherListDto, TrustPublisherDto } from '../trust/trust.dto';
import { PackageTrust } from '../trust/package-trust';
import { ActorTokenListDto, IssueActorTokenDto, IssuedActorTokenDto } from './actor-tokens.dto';
import { ActorTokens } from './actor-tokens';

/** What an admin decides about PacketADE in a workspace: its actor tokens and whose signatures it accepts. */
@ApiTags('packetade')
@Controller('api/v1/workspaces/:ws/packetade')
export class PacketAdeAdminController {
  constructor(
    private readonly tokens: ActorTokens,
    private readonly trust: PackageTrust,
  ) {}

  /** A new actor token; the token is in this answer only. */
  @Post('actors')
  @RequirePermission('admin')
  @ZodResponse({ status: 201, type: IssuedActorTokenDto })
  issue(@Principal() who: WorkspacePrincipal, @Body() body: IssueActorTokenDto) {
    return this.tokens.issue(who, body);
  }

  @Get('actors')
  @RequirePermission('admin')
  @ZodResponse({ status: 200, type: ActorTokenListDto })
  list(@Principal() who: WorkspacePrincipal) {
    return this.tokens.list(who.workspaceId);
  }

  @Delete('actors/:tokenId')
  @RequirePermission('admin')
  @HttpCode(204)
  revoke(@Principal() who: WorkspacePrincipal, @Param('tokenId') tokenId: string): Promise<void> {
    return this.tokens.revoke(who, tokenId);
  }

  /** Trusts an Ed25519 key: packages it signs are accepted without acknowledgement. */
  @Post('publishers')
  @RequirePermission('admin')
  @ZodResponse({ status: 201, type: PublisherDto })
  trustPublisher(@Principal() who: WorkspacePrincipal, @Body() body: TrustPublisherDto) {
    return this.trust.trust(who, body);
  }

  @Get('publishers')
  @RequirePermission('admin')
  @ZodResponse({ status: 200, type: PublisherListDto })
  publishers(@Principal() who: WorkspacePrincipal) {
    return this.trust.list(who.workspaceId);
  }

  @Delete('publishers/:fingerprint')
  @RequirePermission('admin')
  @HttpCode(204)
  removePublisher(@Principal() who: WorkspacePrincipal, @Param('fingerprint') fingerprint: string): Promise<void> {
    return this.trust.remove(who, fingerprint);
  }

  /** Accepts one package digest signed by one key the workspace does not trust. */
  @Post('acknowledgements')
  @RequirePermission('admin')
  @HttpCode(204)
  acknowledge(@Principal() who: WorkspacePrincipal, @Body() body: AcknowledgePackageDto): Promise<void> {
    return this.trust.acknowledge(who, body);
  }
}
