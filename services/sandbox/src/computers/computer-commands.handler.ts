import { Inject, Injectable } from '@nestjs/common';
import { OnCommand } from '@packetagent/bus';
import { ComputerCommands, type ActorRef, type ComputerView, type ParsedComputerSpec } from '@packetagent/contracts';
import { COMPUTER_REGISTRY } from '../sandbox.tokens';
import type { ComputerRegistry } from './computer-registry';

/** `sandbox.computers.*` over NATS request/reply, served by every replica. */
@Injectable()
export class ComputerCommandsHandler {
  constructor(@Inject(COMPUTER_REGISTRY) private readonly registry: ComputerRegistry) {}

  @OnCommand(ComputerCommands.put)
  put(request: { workspaceId: string; name: string; spec: ParsedComputerSpec; acceptHostKey?: string; expectedVersion?: number; actor: ActorRef }): Promise<ComputerView> {
    return this.registry.put(request.workspaceId, request.name, request.spec, request.actor, {
      ...(request.acceptHostKey ? { acceptHostKey: request.acceptHostKey } : {}),
      ...(request.expectedVersion !== undefined ? { expectedVersion: request.expectedVersion } : {}),
    });
  }

  @OnCommand(ComputerCommands.get)
  get(request: { workspaceId: string; name: string }): Promise<ComputerView> {
    return this.registry.get(request.workspaceId, request.name);
  }

  @OnCommand(ComputerCommands.list)
  async list(request: { workspaceId: string }): Promise<{ items: ComputerView[] }> {
    return { items: await this.registry.list(request.workspaceId) };
  }

  @OnCommand(ComputerCommands.remove)
  remove(request: { workspaceId: string; name: string; actor: ActorRef }): Promise<{ name: string; removedAt: string }> {
    return this.registry.remove(request.workspaceId, request.name, request.actor);
  }

  @OnCommand(ComputerCommands.probe)
  probe(request: { workspaceId: string; name: string }): Promise<ComputerView> {
    return this.registry.probe(request.workspaceId, request.name);
  }
}
