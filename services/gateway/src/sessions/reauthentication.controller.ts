import { Body, Controller, HttpCode, Post, Req } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ZodResponse } from 'nestjs-zod';
import type { FastifyRequest } from 'fastify';
import { Authenticated } from '../access/access.decorators';
import { PROBLEM_CONTENT_TYPE } from '../http/problem';
import { sessionIdFrom } from './session.cookie';
import { ReauthenticateDto, ReauthenticateResultDto } from './usecases/reauthenticate/reauthenticate.command';
import { Reauthenticate } from './usecases/reauthenticate/reauthenticate.usecase';

@ApiTags('auth')
@Controller('api/v1/auth')
export class ReauthenticationController {
  constructor(private readonly reauthenticate: Reauthenticate) {}

  @Post('reauthenticate')
  @Authenticated({ principals: ['user'] })
  @HttpCode(200)
  @ApiOperation({
    summary: 'Confirm it is you: the password again (and the second factor, if the account has one)',
    description:
      'Lets this session add or remove passkeys for the next 10 minutes. A wrong password or code is a 400 naming the field (the session stays signed in) ' +
      'and counts towards the login throttle. Signing in again with a passkey confirms it too.',
  })
  @ZodResponse({ status: 200, type: ReauthenticateResultDto })
  @ApiResponse({ status: 400, description: 'validation_failed: `errors` names `password` or `code`', content: { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: '#/components/schemas/Problem' } } } })
  confirm(@Body() body: ReauthenticateDto, @Req() request: FastifyRequest) {
    return this.reauthenticate.execute(sessionIdFrom(request) as string, body, request.ip);
  }
}
