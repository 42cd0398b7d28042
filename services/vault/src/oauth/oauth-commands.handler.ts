import { Injectable } from '@nestjs/common';
import { OnCommand } from '@packetagent/bus';
import { OAuthCommands, type OAuthConnection } from '@packetagent/contracts';
import { BeginConnection, type BeginConnectionRequest, type BeginConnectionResult } from './usecases/begin-connection';
import { CompleteConnection, type CompleteConnectionRequest, type CompleteConnectionResult } from './usecases/complete-connection';
import { IssueListingToken, type ListingTokenRequest, type ListingTokenResult } from './usecases/issue-listing-token';
import { ListConnections } from './usecases/list-connections';

/** `vault.oauth.*` over NATS request/reply, served by every replica. */
@Injectable()
export class OAuthCommandsHandler {
  constructor(
    private readonly beginConnection: BeginConnection,
    private readonly completeConnection: CompleteConnection,
    private readonly listConnections: ListConnections,
    private readonly listingToken: IssueListingToken,
  ) {}

  @OnCommand(OAuthCommands.begin)
  begin(request: BeginConnectionRequest): Promise<BeginConnectionResult> {
    return this.beginConnection.execute(request);
  }

  @OnCommand(OAuthCommands.complete)
  complete(request: CompleteConnectionRequest): Promise<CompleteConnectionResult> {
    return this.completeConnection.execute(request);
  }

  @OnCommand(OAuthCommands.connections)
  connections(request: { workspaceId: string }): Promise<{ items: OAuthConnection[] }> {
    return this.listConnections.execute(request);
  }

  @OnCommand(OAuthCommands.token)
  token(request: ListingTokenRequest): Promise<ListingTokenResult> {
    return this.listingToken.execute(request);
  }
}
