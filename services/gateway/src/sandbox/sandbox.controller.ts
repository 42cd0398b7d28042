import { Body, Controller, Get, HttpCode, Param, Post, Query, Res, UseFilters } from '@nestjs/common';
import { ApiAcceptedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiTags } from '@nestjs/swagger';
import { ZodResponse } from 'nestjs-zod';
import type { FastifyReply } from 'fastify';
import { ExecIdSchema, SandboxCommands } from '@packetagent/contracts';
import { CommandBus } from '@packetagent/bus';
import { ChunkedBytesMismatchError, PayloadStore, readChunkedBytes } from '@packetagent/eventstore';
import { RequirePermission } from '../access/access.decorators';
import { Principal, type WorkspacePrincipal } from '../access/principal';
import { ExecStreams } from './exec-streams';
import {
  ExecAcceptedDto,
  ExecCancelResultDto,
  ExecListDto,
  ExecListQueryDto,
  ExecOutputQueryDto,
  ExecRecordDto,
  ExecResultDto,
  SandboxExecBodyDto,
  SandboxStatusDto,
} from './sandbox.dto';
import { ExecOutputNotReadyError, ExecRefusedFilter, invalidExecId, OutputDigestMismatchError } from './sandbox.errors';
import { StartExecCommand } from './usecases/start-exec/start-exec.command';
import { StartExec } from './usecases/start-exec/start-exec.usecase';

const EXEC_ID_PARAM = ApiParam({ name: 'id', description: 'exec id: `op-<uuid>` for an operator exec, `<runId>:<callId>` for a run_command call', schema: { type: 'string', pattern: '^[A-Za-z0-9_:.-]{1,160}$' } });

const STREAM_DESCRIPTION =
  'Server-sent events: `started` {execId, argv, driver, startedAt}, then `output` {stream: stdout|stderr, text} as the command writes ' +
  '(live text is lossy and cut at 1 MiB per stream; GET .../output has every byte), then `ended` {result} with the ExecResult, after which ' +
  'the server closes the stream: close the client on `ended` rather than reconnecting. An exec that has already ended answers its `ended` ' +
  'event alone. A `: heartbeat` comment at every interval; a last `closing` event {reason, detail} when the server ends the stream first.';

function execIdOf(raw: string): string {
  if (!ExecIdSchema.safeParse(raw).success) throw invalidExecId();
  return raw;
}

function linksOf(workspaceId: string, execId: string) {
  const self = `/api/v1/workspaces/${workspaceId}/sandbox/exec/${encodeURIComponent(execId)}`;
  return { self, stream: `${self}/stream`, output: `${self}/output`, cancel: `${self}/cancel` };
}

/**
 * An operator's door to the sandbox: run a command (in a scratch workspace of its own, or in a
 * run's workspace), follow it, cancel it, download its output. Forwarded to the sandbox service
 * over NATS; another workspace's exec answers 404 like one that never was.
 */
@ApiTags('sandbox')
@Controller('api/v1/workspaces/:ws/sandbox')
@UseFilters(ExecRefusedFilter)
export class SandboxController {
  constructor(
    private readonly bus: CommandBus,
    private readonly startExec: StartExec,
    private readonly streams: ExecStreams,
    private readonly payloads: PayloadStore,
  ) {}

  @Post('exec')
  @HttpCode(202)
  @RequirePermission('sandbox-exec')
  @ApiOperation({
    summary: 'Run a command in the sandbox: 202 once it has started (it runs to its end whatever the client does), or with wait=true 200 with its result once it has ended',
    description:
      'A refusal answers 422 `exec_refused` with every issue and runs nothing (shell metacharacters, a program that is not a plain name, a cwd outside the workspace, ' +
      'an environment name not allowlisted or that looks like a secret, a limit above the maximum); no driver on the host answers 503 `sandbox_unavailable` naming what to install. ' +
      'A command that ended before it could start (the driver failed it) answers 200 with its result.',
  })
  @ApiAcceptedResponse({ type: ExecAcceptedDto, description: 'started; `Location` is the exec' })
  @ApiOkResponse({ type: ExecResultDto, description: 'ended (wait=true, or it never started)' })
  async exec(@Principal() who: WorkspacePrincipal, @Body() body: SandboxExecBodyDto, @Res({ passthrough: true }) reply: FastifyReply) {
    const started = await this.startExec.execute(new StartExecCommand(who.workspaceId, who.actor, body));
    if (started.kind === 'ended') {
      void reply.status(200);
      return started.result;
    }
    const links = linksOf(who.workspaceId, started.execId);
    void reply.header('location', links.self);
    return { execId: started.execId, state: 'running' as const, links };
  }

  @Get('exec')
  @RequirePermission('inspect')
  @ApiOperation({ summary: 'The workspace\'s execs, newest first: operator execs and run_command calls' })
  @ZodResponse({ status: 200, type: ExecListDto })
  list(@Principal() who: WorkspacePrincipal, @Query() query: ExecListQueryDto) {
    return this.bus.request(SandboxCommands.list, { workspaceId: who.workspaceId, runId: query.runId, limit: query.limit });
  }

  @Get('exec/:id')
  @RequirePermission('inspect')
  @EXEC_ID_PARAM
  @ApiOperation({ summary: 'One exec: what ran, by whom, and its result once it has ended' })
  @ZodResponse({ status: 200, type: ExecRecordDto })
  get(@Principal() who: WorkspacePrincipal, @Param('id') id: string) {
    return this.bus.request(SandboxCommands.get, { workspaceId: who.workspaceId, execId: execIdOf(id) });
  }

  @Post('exec/:id/cancel')
  @HttpCode(200)
  @RequirePermission('sandbox-exec')
  @EXEC_ID_PARAM
  @ApiOperation({ summary: "Kill the exec's process tree; it ends `killed` with limit `cancelled`. `found: false` when no sandbox replica is running it (ended, or never was)" })
  @ZodResponse({ status: 200, type: ExecCancelResultDto })
  cancel(@Principal() who: WorkspacePrincipal, @Param('id') id: string) {
    return this.bus.request(SandboxCommands.cancel, { workspaceId: who.workspaceId, execId: execIdOf(id), actor: who.actor });
  }

  @Get('exec/:id/stream')
  @RequirePermission('inspect')
  @EXEC_ID_PARAM
  @ApiProduces('text/event-stream')
  @ApiOkResponse({ description: STREAM_DESCRIPTION, content: { 'text/event-stream': { schema: { type: 'string' } } } })
  async stream(@Principal() who: WorkspacePrincipal, @Param('id') id: string, @Res() reply: FastifyReply): Promise<void> {
    await this.streams.serve(who.workspaceId, execIdOf(id), reply);
  }

  @Get('exec/:id/output')
  @RequirePermission('inspect')
  @EXEC_ID_PARAM
  @ApiProduces('application/octet-stream')
  @ApiOkResponse({
    description:
      'Every byte the command wrote to the stream (up to its output limit), checked against the size and SHA-256 in its result before it is sent; ' +
      '`X-Content-SHA256` carries that digest (hex). A running exec answers 409 `exec_running_conflict`.',
    content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
  })
  async output(@Principal() who: WorkspacePrincipal, @Param('id') id: string, @Query() query: ExecOutputQueryDto, @Res({ passthrough: true }) reply: FastifyReply): Promise<Buffer> {
    const execId = execIdOf(id);
    const record = await this.bus.request(SandboxCommands.get, { workspaceId: who.workspaceId, execId });
    if (!record.result) throw new ExecOutputNotReadyError(`exec ${execId} is still running; its output is kept when it ends`);
    const output = record.result[query.stream];
    const bytes = await readChunkedBytes(this.payloads, who.workspaceId, output).catch((error: unknown) => {
      throw error instanceof ChunkedBytesMismatchError ? new OutputDigestMismatchError(`the ${query.stream} of exec ${execId}: ${error.message}`, { cause: error }) : error;
    });
    void reply
      .header('content-type', 'application/octet-stream')
      .header('x-content-sha256', output.digest)
      .header('repr-digest', `sha-256=:${Buffer.from(output.digest, 'hex').toString('base64')}:`)
      .header('content-disposition', `attachment; filename="${execId.replace(/:/g, '_')}.${query.stream}"`)
      .header('cache-control', 'private, no-cache');
    return bytes;
  }

  @Get('status')
  @RequirePermission('inspect')
  @ApiOperation({ summary: 'The drivers found, which one commands run in, the limits that apply (defaults and maximum) and those a driver cannot enforce here' })
  @ZodResponse({ status: 200, type: SandboxStatusDto })
  status() {
    return this.bus.request(SandboxCommands.status, {});
  }
}
