import { Injectable } from '@nestjs/common';
import type { z } from 'zod';
import { OnCommand } from '@packetagent/bus';
import { PolicyCommands, type AttentionView, type AuthorizeRequest, type AuthorizeResult, type JsonObject } from '@packetagent/contracts';
import { AnswerAttention } from './attention/usecases/answer-attention';
import { RaiseAttention } from './attention/usecases/raise-attention';
import { ReadAttention } from './attention/usecases/read-attention';
import { Authorize } from './authorize/authorize';
import { GrantComputerKey } from './computers/usecases/grant-computer-key';
import { GrantRouteCredential } from './notifications/grant-route-credential';

type Req<K extends keyof typeof PolicyCommands> = z.output<(typeof PolicyCommands)[K]['request']>;

/** `policy.*` over NATS request/reply, served by every replica. */
@Injectable()
export class PolicyCommandHandlers {
  constructor(
    private readonly authorizeCall: Authorize,
    private readonly answerAttention: AnswerAttention,
    private readonly readAttention: ReadAttention,
    private readonly raiseAttention: RaiseAttention,
    private readonly grantComputerKey: GrantComputerKey,
    private readonly grantRouteCredential: GrantRouteCredential,
  ) {}

  @OnCommand(PolicyCommands.authorize)
  authorize(request: AuthorizeRequest): Promise<AuthorizeResult> {
    return this.authorizeCall.execute(request);
  }

  @OnCommand(PolicyCommands.approveAttention)
  approve(request: Req<'approveAttention'>): Promise<AttentionView> {
    const { scope, role, email, arguments: edited } = request;
    return this.answerAttention.execute(request.workspaceId, request.attentionId, { kind: 'approve', scope, role, email, arguments: edited as JsonObject | undefined }, request.actor);
  }

  @OnCommand(PolicyCommands.rejectAttention)
  reject(request: Req<'rejectAttention'>): Promise<AttentionView> {
    return this.answerAttention.execute(request.workspaceId, request.attentionId, { kind: 'reject', reason: request.reason, role: request.role, email: request.email }, request.actor);
  }

  @OnCommand(PolicyCommands.listAttention)
  async list(request: Req<'listAttention'>): Promise<{ items: AttentionView[] }> {
    return { items: await this.readAttention.list(request.workspaceId, request.state, request.limit) };
  }

  @OnCommand(PolicyCommands.raiseAttention)
  raise(request: Req<'raiseAttention'>): Promise<AttentionView> {
    return this.raiseAttention.execute(request);
  }

  @OnCommand(PolicyCommands.routeCredentialGrant)
  routeCredential(request: Req<'routeCredentialGrant'>): Promise<{ credential: string; token: string }> {
    return this.grantRouteCredential.execute(request);
  }

  @OnCommand(PolicyCommands.computerKeyGrant)
  computerKey(request: Req<'computerKeyGrant'>): Promise<{ credential: string; token: string }> {
    return this.grantComputerKey.execute(request);
  }

  @OnCommand(PolicyCommands.getAttention)
  get(request: Req<'getAttention'>): Promise<AttentionView> {
    return this.readAttention.get(request.workspaceId, request.attentionId);
  }
}
