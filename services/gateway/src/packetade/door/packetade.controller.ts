import { Body, Controller, Get, Headers, HttpCode, Param, Post, Put, Query, Req, Res, type RawBodyRequest } from '@nestjs/common';
import { ApiBody, ApiTags } from '@nestjs/swagger';
import { ZodResponse } from 'nestjs-zod';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import { jsonIssues, readPackageDocument, readPackageRequest, ValidationError, type JsonValue } from '@packetagent/contracts';
import { ActorTokenOnly } from '../../access/access.decorators';
import { ActivationDto, ControlledDeploymentDto, DeploymentDto, RunDto, RunPageDto } from '../../control-plane/control-plane-replies.dto';
import type { ActorPrincipal } from '../actors/actor-principal';
import { CallingActor } from './calling-actor';
import { DeployReceiptDto, DoorActionDto, DoorRollbackDto, DoorRunDto, DoorRunsQueryDto, ValidationReportDto } from './door.dto';
import { PacketAdeDoor } from './packetade-door';

const PACKAGE_BODY = ApiBody({ description: 'a WorkerPackage v1, or its DSSE envelope (docs/schemas/worker-package.v1.schema.json)', schema: { type: 'object' } });
const DEPLOY_BODY = ApiBody({
  description: '{"package": <WorkerPackage or DSSE envelope>, "idempotencyKey"?: string}; at most 1 MiB in all',
  schema: { type: 'object', required: ['package'], properties: { package: { type: 'object' }, idempotencyKey: { type: 'string', maxLength: 200 } } },
});

/** The PacketADE door over REST: every route takes an actor token, and answers problem+json when it refuses. */
@ApiTags('packetade')
@Controller('api/v1/packetade')
export class PacketAdeController {
  constructor(private readonly door: PacketAdeDoor) {}

  /** Integrity, signature and a preflight of what the package needs; writes nothing but the call's audit record. */
  @Post('packages/validate')
  @HttpCode(200)
  @ActorTokenOnly()
  @PACKAGE_BODY
  @ZodResponse({ status: 200, type: ValidationReportDto })
  validate(@CallingActor() who: ActorPrincipal, @Req() request: RawBodyRequest<FastifyRequest>) {
    return this.door.validate(who, 'rest', () => readPackageDocument(rawBodyOf(request)));
  }

  /** 201 with the receipt of a new deployment; 200 with the same receipt for the same package or idempotency key again. */
  @Post('deployments')
  @ActorTokenOnly()
  @DEPLOY_BODY
  @ZodResponse({ status: 201, type: DeployReceiptDto })
  async deploy(
    @CallingActor() who: ActorPrincipal,
    @Req() request: RawBodyRequest<FastifyRequest>,
    @Headers('idempotency-key') headerKey: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const receipt = await this.door.deploy(who, 'rest', () => {
      const { document, fields } = readPackageRequest(rawBodyOf(request));
      return { document, idempotencyKey: idempotencyKeyOf(fields, headerKey) };
    });
    reply.status(receipt.created ? 201 : 200);
    return receipt;
  }

  /** A new version from the package, and the deployment moved to it; the same package again changes nothing (`created: false`). */
  @Put('deployments/:id')
  @ActorTokenOnly()
  @DEPLOY_BODY
  @ZodResponse({ status: 200, type: DeployReceiptDto })
  update(@CallingActor() who: ActorPrincipal, @Param('id') id: string, @Req() request: RawBodyRequest<FastifyRequest>) {
    return this.door.update(who, 'rest', id, () => {
      const { document, fields } = readPackageRequest(rawBodyOf(request));
      const extra = Object.keys(fields);
      if (extra.length > 0) throw new ValidationError('invalid request', extra.map((key) => ({ path: key.slice(0, 100), message: 'unknown field: an update takes only "package"' })));
      return document;
    });
  }

  /** A manual run with input: 201 for a new run, 200 for the same idempotency key again. */
  @Post('deployments/:id/runs')
  @ActorTokenOnly()
  @ZodResponse({ status: 201, type: ActivationDto })
  async activate(
    @CallingActor() who: ActorPrincipal,
    @Param('id') id: string,
    @Headers('idempotency-key') headerKey: string | undefined,
    @Body() body: DoorRunDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    // Values Postgres cannot hold (NUL, lone surrogates) are refused here rather than failing at the store.
    const issues = [...jsonIssues(body.input ?? null, 'input'), ...jsonIssues(body.idempotencyKey ?? null, 'idempotencyKey')];
    if (issues.length > 0) throw new ValidationError('invalid request', issues);
    const key = body.idempotencyKey ?? (headerKey ? headerKey.slice(0, 200) : randomUUID());
    const result = await this.door.activate(who, 'rest', id, (body.input ?? null) as JsonValue | null, key);
    reply.status(result.duplicate ? 200 : 201);
    return result;
  }

  @Get('deployments/:id')
  @ActorTokenOnly()
  @ZodResponse({ status: 200, type: DeploymentDto })
  inspect(@CallingActor() who: ActorPrincipal, @Param('id') id: string) {
    return this.door.inspect(who, 'rest', id);
  }

  @Get('deployments/:id/runs')
  @ActorTokenOnly()
  @ZodResponse({ status: 200, type: RunPageDto })
  runs(@CallingActor() who: ActorPrincipal, @Param('id') id: string, @Query() query: DoorRunsQueryDto) {
    return this.door.listRuns(who, 'rest', id, query.cursor ?? null, query.limit);
  }

  /** One run of the actor's deployments: its state, so a client can tell a run that ended before it started following. */
  @Get('runs/:runId')
  @ActorTokenOnly()
  @ZodResponse({ status: 200, type: RunDto })
  run(@CallingActor() who: ActorPrincipal, @Param('runId') runId: string) {
    return this.door.getRun(who, 'rest', runId);
  }

  @Post('deployments/:id/pause')
  @HttpCode(200)
  @ActorTokenOnly()
  @ZodResponse({ status: 200, type: ControlledDeploymentDto })
  pause(@CallingActor() who: ActorPrincipal, @Param('id') id: string, @Body() body: DoorActionDto) {
    return this.door.control(who, 'rest', id, 'pause', body.reason ?? null, null);
  }

  @Post('deployments/:id/resume')
  @HttpCode(200)
  @ActorTokenOnly()
  @ZodResponse({ status: 200, type: ControlledDeploymentDto })
  resume(@CallingActor() who: ActorPrincipal, @Param('id') id: string, @Body() body: DoorActionDto) {
    return this.door.control(who, 'rest', id, 'resume', body.reason ?? null, null);
  }

  @Post('deployments/:id/rollback')
  @HttpCode(200)
  @ActorTokenOnly()
  @ZodResponse({ status: 200, type: ControlledDeploymentDto })
  rollback(@CallingActor() who: ActorPrincipal, @Param('id') id: string, @Body() body: DoorRollbackDto) {
    return this.door.control(who, 'rest', id, 'rollback', body.reason ?? null, body.version);
  }

  @Post('deployments/:id/revoke')
  @HttpCode(200)
  @ActorTokenOnly()
  @ZodResponse({ status: 200, type: ControlledDeploymentDto })
  revoke(@CallingActor() who: ActorPrincipal, @Param('id') id: string, @Body() body: DoorActionDto) {
    return this.door.control(who, 'rest', id, 'revoke', body.reason ?? null, null);
  }
}

/** The exact bytes received (Nest keeps them for JSON), so duplicate keys and the size are judged on what was sent. */
function rawBodyOf(request: RawBodyRequest<FastifyRequest>): Buffer {
  if (request.rawBody) return request.rawBody;
  throw new ValidationError('invalid request', [{ path: '(body)', message: 'send the package as JSON (Content-Type: application/json)' }]);
}

function idempotencyKeyOf(fields: Record<string, unknown>, header: string | undefined): string | null {
  const { idempotencyKey, ...rest } = fields;
  const extra = Object.keys(rest);
  if (extra.length > 0) throw new ValidationError('invalid request', extra.map((key) => ({ path: key.slice(0, 100), message: 'unknown field: a deploy takes "package" and "idempotencyKey"' })));
  if (idempotencyKey !== undefined) {
    if (typeof idempotencyKey !== 'string' || idempotencyKey.length < 1 || idempotencyKey.length > 200) {
      throw new ValidationError('invalid request', [{ path: 'idempotencyKey', message: 'a string of 1 to 200 characters' }]);
    }
    return idempotencyKey;
  }
  return header ? header.slice(0, 200) : null;
}
