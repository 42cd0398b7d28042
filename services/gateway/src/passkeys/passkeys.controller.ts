import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Req, Res } from '@nestjs/common';
import { ApiNoContentResponse, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ZodResponse } from 'nestjs-zod';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Authenticated, Public } from '../access/access.decorators';
import { Principal } from '../access/principal';
import { PROBLEM_CONTENT_TYPE } from '../http/problem';
import { sessionIdFrom } from '../sessions/session.cookie';
import { SessionCookies } from '../sessions/session.cookies';
import {
  AuthenticationOptionsDto,
  FinishPasskeyLoginDto,
  PasskeyListDto,
  PasskeyLoginResultDto,
  PasskeyViewDto,
  RegisterPasskeyDto,
  RegistrationOptionsDto,
  RenamePasskeyDto,
  StartPasskeyLoginDto,
} from './passkeys.dto';
import { FinishPasskeyLogin } from './usecases/finish-passkey-login/finish-passkey-login.usecase';
import { ListPasskeys } from './usecases/list-passkeys/list-passkeys.usecase';
import { RegisterPasskey } from './usecases/register-passkey/register-passkey.usecase';
import { RemovePasskey } from './usecases/remove-passkey/remove-passkey.usecase';
import { RenamePasskey } from './usecases/rename-passkey/rename-passkey.usecase';
import { StartPasskeyLogin } from './usecases/start-passkey-login/start-passkey-login.usecase';
import { StartPasskeyRegistration } from './usecases/start-passkey-registration/start-passkey-registration.usecase';

const ProblemResponse = (status: number, description: string) =>
  ApiResponse({ status, description, content: { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: '#/components/schemas/Problem' } } } });

const ID_PARAM = ApiParam({ name: 'id', description: 'passkey id', schema: { type: 'string', format: 'uuid' } });

const RECENT =
  'Needs a recent authentication: a session signed in (or confirmed with POST /api/v1/auth/reauthenticate) within the last 10 minutes; otherwise `reauthentication_required`.';
const UNAVAILABLE = 'passkeys_unavailable: the server has no public URL with a host name (PACKETAGENT_PUBLIC_URL), which passkeys are bound to';

/**
 * Passkeys (WebAuthn): a signed-in user's own credentials, and signing in with one. The sign-in
 * routes live under /auth/login so that a refused passkey reads like a refused password.
 */
@ApiTags('passkeys')
@Controller('api/v1/auth')
export class PasskeysController {
  constructor(
    private readonly startRegistration: StartPasskeyRegistration,
    private readonly registerPasskey: RegisterPasskey,
    private readonly listPasskeys: ListPasskeys,
    private readonly renamePasskey: RenamePasskey,
    private readonly removePasskey: RemovePasskey,
    private readonly startLogin: StartPasskeyLogin,
    private readonly finishLogin: FinishPasskeyLogin,
    private readonly cookies: SessionCookies,
  ) {}

  @Post('passkeys/registration/options')
  @Authenticated({ principals: ['user'] })
  @HttpCode(200)
  @ApiOperation({
    summary: 'Start adding a passkey: the WebAuthn creation options',
    description: `Hand the answer to the browser (\`navigator.credentials.create\`, or SimpleWebAuthn's \`startRegistration\`) and send what it returns to POST /api/v1/auth/passkeys within 5 minutes; the challenge is good once. ${RECENT}`,
  })
  @ZodResponse({ status: 200, type: RegistrationOptionsDto })
  @ProblemResponse(503, UNAVAILABLE)
  registrationOptions(@Principal() principal: Principal, @Req() request: FastifyRequest) {
    return this.startRegistration.execute(principal.id, sessionIdFrom(request));
  }

  @Post('passkeys')
  @Authenticated({ principals: ['user'] })
  @ApiOperation({
    summary: 'Add a passkey: verify the browser’s answer to the creation options and store the credential',
    description: `The answer must carry the challenge issued to this user, come from the console's origin and RP id, and have user verification. ${RECENT}`,
  })
  @ZodResponse({ status: 201, type: PasskeyViewDto })
  @ProblemResponse(400, 'validation_failed: the answer was not accepted; `errors[0].message` (path `response`) says why')
  @ProblemResponse(409, 'passkey_already_exists: this authenticator is already registered')
  @ProblemResponse(503, UNAVAILABLE)
  register(@Principal() principal: Principal, @Req() request: FastifyRequest, @Body() body: RegisterPasskeyDto) {
    return this.registerPasskey.execute(principal.id, sessionIdFrom(request), body);
  }

  @Get('passkeys')
  @Authenticated({ principals: ['user'] })
  @ApiOperation({ summary: 'Your passkeys, oldest first', description: 'Only the caller’s own; no key material is ever returned.' })
  @ZodResponse({ status: 200, type: PasskeyListDto })
  list(@Principal() principal: Principal) {
    return this.listPasskeys.execute(principal.id);
  }

  @Patch('passkeys/:id')
  @Authenticated({ principals: ['user'] })
  @ID_PARAM
  @ApiOperation({ summary: 'Rename one of your passkeys' })
  @ZodResponse({ status: 200, type: PasskeyViewDto })
  @ProblemResponse(404, 'passkey_not_found: not one of your passkeys')
  rename(@Principal() principal: Principal, @Param('id') id: string, @Body() body: RenamePasskeyDto) {
    return this.renamePasskey.execute(principal.id, id, body);
  }

  @Delete('passkeys/:id')
  @Authenticated({ principals: ['user'] })
  @HttpCode(204)
  @ID_PARAM
  @ApiOperation({ summary: 'Remove one of your passkeys: it signs no one in any more', description: RECENT })
  @ApiNoContentResponse({ description: 'removed' })
  @ProblemResponse(404, 'passkey_not_found: not one of your passkeys')
  async remove(@Principal() principal: Principal, @Req() request: FastifyRequest, @Param('id') id: string): Promise<void> {
    await this.removePasskey.execute(principal.id, sessionIdFrom(request), id);
  }

  @Post('login/passkey/options')
  @Public()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Start signing in with a passkey: the WebAuthn request options',
    description:
      'Without `email` any passkey of this site may answer (discoverable credentials, no username needed). Hand the answer to the browser ' +
      '(`navigator.credentials.get`, or SimpleWebAuthn\'s `startAuthentication`) and send what it returns to POST /api/v1/auth/login/passkey within 5 minutes. ' +
      'Throttled with password sign-in (429 with Retry-After).',
  })
  @ZodResponse({ status: 200, type: AuthenticationOptionsDto })
  @ProblemResponse(429, 'rate_limited: too many failed sign-ins from this address or for this e-mail address')
  @ProblemResponse(503, UNAVAILABLE)
  loginOptions(@Body() body: StartPasskeyLoginDto, @Req() request: FastifyRequest) {
    return this.startLogin.execute(body, request.ip);
  }

  @Post('login/passkey')
  @Public()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Sign in with a passkey: sets the `pa_session` cookie',
    description:
      'Verifies the assertion (challenge once, origin, RP id, signature, user verification, a signature counter that moved forward) and opens a full session, ' +
      'as a password and second factor would: the passkey with user verification is both factors. Every refusal is the same 401 `invalid_credentials` and counts ' +
      'towards the login throttle; a counter that went backwards is also recorded against the passkey. A session cookie sent along is ended.',
  })
  @ZodResponse({ status: 200, type: PasskeyLoginResultDto })
  @ProblemResponse(401, 'invalid_credentials: the passkey was not accepted')
  @ProblemResponse(429, 'rate_limited: too many failed sign-ins from this address or for this e-mail address')
  async login(@Body() body: FinishPasskeyLoginDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const session = await this.finishLogin.execute(body, request.ip, sessionIdFrom(request));
    this.cookies.issue(reply, session);
    return { csrfToken: session.csrfToken, totpRequired: false as const };
  }
}
