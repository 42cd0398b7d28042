import { Inject, Injectable } from '@nestjs/common';
import { CommandBus, CommandTimeoutError, NoHandlerError, RemoteCommandError } from '@packetagent/bus';
import { ComputerCommands, ComputerErrorCodes, ValidationError } from '@packetagent/contracts';
import { POLICY_OPTIONS, type ResolvedPolicyOptions } from '../policy.options';
import type { ComputerLookup } from './compose-computer';

/**
 * Reads a computer's record from the sandbox service, which owns the registry. Fail-closed: any
 * answer but a readable record of that very computer is a lookup that failed, with why.
 */
@Injectable()
export class ReadComputer {
  constructor(
    private readonly bus: CommandBus,
    @Inject(POLICY_OPTIONS) private readonly options: ResolvedPolicyOptions,
  ) {}

  async lookup(workspaceId: string, name: string): Promise<ComputerLookup> {
    try {
      const view = await this.bus.request(ComputerCommands.get, { workspaceId, name }, { timeoutMs: this.options.computerRequestTimeoutMs });
      if (view.workspaceId !== workspaceId || view.name !== name) return { ok: false, reason: 'unreadable', text: `the sandbox answered another record for computer "${name}"` };
      return { ok: true, view };
    } catch (error) {
      const failed = failure(name, error);
      this.options.log('warn', 'computer record not read', { workspaceId, computer: name, reason: failed.reason, code: (error as { code?: unknown })?.code });
      return failed;
    }
  }
}

// Only codes are read from the error: a remote message is not repeated in a decision.
function failure(name: string, error: unknown): Extract<ComputerLookup, { ok: false }> {
  if (error instanceof RemoteCommandError && error.code === ComputerErrorCodes.notFound) return { ok: false, reason: 'not_found', text: `no computer "${name}" is registered in this workspace` };
  if (error instanceof RemoteCommandError && error.code === ComputerErrorCodes.recordUnreadable) return { ok: false, reason: 'unreadable', text: `the record of computer "${name}" cannot be read` };
  if (error instanceof NoHandlerError || error instanceof CommandTimeoutError) return { ok: false, reason: 'unanswered', text: `the sandbox service did not answer for computer "${name}"` };
  if (error instanceof ValidationError) return { ok: false, reason: 'unreadable', text: `the sandbox answered a record of computer "${name}" that cannot be read` };
  if (error instanceof RemoteCommandError) return { ok: false, reason: 'unanswered', text: `the sandbox could not read computer "${name}" (${error.code})` };
  return { ok: false, reason: 'unanswered', text: `computer "${name}" could not be read` };
}
