import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Put, UseFilters } from '@nestjs/common';
import { ApiNoContentResponse, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ZodResponse } from 'nestjs-zod';
import { ComputerCommands } from '@packetagent/contracts';
import { CommandBus } from '@packetagent/bus';
import { RequirePermission } from '../access/access.decorators';
import { Principal, type WorkspacePrincipal } from '../access/principal';
import { PROBLEM_CONTENT_TYPE } from '../http/problem';
import { COMPUTER_NAME_PATTERN, computerNameOf } from './computer-name';
import { ComputerProblemFilter } from './computer-problem.filter';
import { ComputerListDto, ComputerViewDto, PutComputerBodyDto } from './computers.dto';
import { COMPUTERS_ROUTES_OPTIONS, connectingReplyMs, type ComputersRoutesOptions } from './computers-routes.options';

const NAME_PARAM = ApiParam({ name: 'name', description: 'computer name', schema: { type: 'string', pattern: COMPUTER_NAME_PATTERN } });

const ProblemResponse = (status: number, description: string) =>
  ApiResponse({ status, description, content: { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: '#/components/schemas/Problem' } } } });

const STATUS_DESCRIPTION =
  '`status.state` is `online` only within `staleAfterMs` of a successful probe, `offline` only after one failed affirmatively, `unknown` otherwise; ' +
  '`observedAt` and `ageMs` say when it was last observed (null: never). `status.hostKey.state` `changed` means the computer presented a key that is not pinned: ' +
  'commands on it are refused until the record is updated.';

/**
 * The workspace's computers: machines a worker's run_command runs on, over SSH with pinned host
 * keys, or the local sandbox. Forwarded to the registry in the sandbox service over NATS;
 * another workspace's computer answers 404 like one that never was.
 */
@ApiTags('computers')
@Controller('api/v1/workspaces/:ws/computers')
@UseFilters(ComputerProblemFilter)
export class ComputersController {
  /** Registering and probing connect to the computer (handshake, host key, capabilities): longer than a plain read. */
  private readonly connectingTimeout: { timeoutMs: number };

  constructor(
    private readonly bus: CommandBus,
    @Inject(COMPUTERS_ROUTES_OPTIONS) options: ComputersRoutesOptions,
  ) {
    this.connectingTimeout = { timeoutMs: connectingReplyMs(options) };
  }

  @Get()
  @RequirePermission('inspect')
  @ApiOperation({ summary: "The workspace's computers with their status as last observed", description: STATUS_DESCRIPTION })
  @ZodResponse({ status: 200, type: ComputerListDto })
  list(@Principal() who: WorkspacePrincipal) {
    return this.bus.request(ComputerCommands.list, { workspaceId: who.workspaceId });
  }

  @Get(':name')
  @RequirePermission('inspect')
  @NAME_PARAM
  @ApiOperation({ summary: 'One computer: its target, roots, policy, pinned host keys, capabilities and status', description: STATUS_DESCRIPTION })
  @ZodResponse({ status: 200, type: ComputerViewDto })
  @ProblemResponse(404, 'computer_not_found')
  @ProblemResponse(409, 'computer_record_unreadable: the stored record is damaged or from a newer version; it is left exactly as it is')
  get(@Principal() who: WorkspacePrincipal, @Param('name') name: string) {
    return this.bus.request(ComputerCommands.get, { workspaceId: who.workspaceId, name: computerNameOf(name) });
  }

  @Put(':name')
  @RequirePermission('computer-manage')
  @NAME_PARAM
  @ApiOperation({
    summary: 'Register a computer, or replace its spec',
    description:
      'An ssh computer is reached to read its host key before anything is stored. Without a pinned key (`ssh.hostKeys`) the answer is 409 `host_key_unpinned` ' +
      'with the fingerprint the host presented in `presentedHostKey` (and in `errors` at `acceptHostKey`): verify it on the host, then send it back as `acceptHostKey` to pin it. ' +
      'The policy is filled in conservatively (ask, secrets deny, approval explicit).',
  })
  @ZodResponse({ status: 200, type: ComputerViewDto })
  @ProblemResponse(
    409,
    'host_key_unpinned (presentedHostKey is the key to verify), host_key_changed (the host now presents another key than the acceptHostKey confirmed), ' +
      'computer_version_conflict (expectedVersion is not the current version) or computer_record_unreadable',
  )
  @ProblemResponse(422, 'computer_unreachable: the computer did not answer to show its host key')
  put(@Principal() who: WorkspacePrincipal, @Param('name') name: string, @Body() body: PutComputerBodyDto) {
    const { acceptHostKey, expectedVersion, ...spec } = body;
    return this.bus.request(
      ComputerCommands.put,
      { workspaceId: who.workspaceId, name: computerNameOf(name), spec, acceptHostKey, expectedVersion, actor: who.actor },
      this.connectingTimeout,
    );
  }

  @Delete(':name')
  @HttpCode(204)
  @RequirePermission('computer-manage')
  @NAME_PARAM
  @ApiOperation({ summary: 'Remove a computer: commands can no longer run on it' })
  @ApiNoContentResponse({ description: 'removed' })
  @ProblemResponse(404, 'computer_not_found')
  async remove(@Principal() who: WorkspacePrincipal, @Param('name') name: string): Promise<void> {
    await this.bus.request(ComputerCommands.remove, { workspaceId: who.workspaceId, name: computerNameOf(name), actor: who.actor });
  }

  @Post(':name/probe')
  @HttpCode(200)
  @RequirePermission('computer-manage')
  @NAME_PARAM
  @ApiOperation({
    summary: 'Probe now: connect, verify the host key, read the capabilities; answers the computer with the status that follows',
    description: `${STATUS_DESCRIPTION} A probe that fails (unreachable, refused, a key that is not pinned) is part of that status, not an error.`,
  })
  @ZodResponse({ status: 200, type: ComputerViewDto })
  @ProblemResponse(404, 'computer_not_found')
  probe(@Principal() who: WorkspacePrincipal, @Param('name') name: string) {
    return this.bus.request(ComputerCommands.probe, { workspaceId: who.workspaceId, name: computerNameOf(name), actor: who.actor }, this.connectingTimeout);
  }
}
