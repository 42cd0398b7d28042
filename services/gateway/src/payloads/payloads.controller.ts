import { Controller, Get, Param, Res } from '@nestjs/common';
import { ApiOkResponse, ApiParam, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { PayloadDigestSchema, ValidationError } from '@packetagent/contracts';
import { PayloadStore } from '@packetagent/eventstore';
import { RequirePermission } from '../access/access.decorators';
import { Principal, type WorkspacePrincipal } from '../access/principal';

const DIGEST_PATTERN = '^[0-9a-f]{64}$';

/**
 * Content stored by reference: event fields too large to carry inline (model text, native
 * transcripts, tool arguments and results) stand in the event as `{"$payload": {digest, size,
 * mediaType}}`; this answers the content under that digest, in the caller's workspace only.
 */
@ApiTags('events')
@Controller('api/v1/workspaces/:ws')
export class PayloadsController {
  constructor(private readonly payloads: PayloadStore) {}

  /** The stored content, exactly: the canonical JSON whose SHA-256 is the digest, checked before it is sent. */
  @Get('payloads/:digest')
  @RequirePermission('inspect')
  @ApiParam({ name: 'digest', description: 'SHA-256 (hex) of the content, from a `$payload` reference', schema: { type: 'string', pattern: DIGEST_PATTERN } })
  @ApiProduces('application/json')
  @ApiOkResponse({
    description:
      'The content bytes (RFC 8785 canonical JSON, UTF-8) whose SHA-256 is the digest; `repr-digest` carries it as RFC 9530 `sha-256`. ' +
      'A payload of another workspace answers 404 like one never stored; content that no longer matches its digest answers 500 `payload_digest_mismatch`.',
    content: { 'application/json': { schema: { description: 'the JSON value the reference stands for' } } },
  })
  async get(@Principal() who: WorkspacePrincipal, @Param('digest') digest: string, @Res({ passthrough: true }) reply: FastifyReply): Promise<Buffer> {
    if (!PayloadDigestSchema.safeParse(digest).success) {
      throw new ValidationError('invalid payload digest', [{ path: 'digest', message: 'a SHA-256 digest: 64 lower-case hex digits' }]);
    }
    const content = await this.payloads.get(who.workspaceId, digest);
    void reply
      .header('content-type', 'application/json')
      .header('etag', `"${digest}"`)
      .header('repr-digest', `sha-256=:${Buffer.from(digest, 'hex').toString('base64')}:`)
      .header('cache-control', 'private, no-cache');
    return content;
  }
}
