import { Body, Controller, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { ZodResponse } from 'nestjs-zod';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Authenticated, Public } from '../access/access.decorators';
import { Principal } from '../access/principal';
import { sessionIdFrom } from './session.cookie';
import { SessionCookies } from './session.cookies';
import { CompleteTotpLoginDto, CompleteTotpLoginResultDto } from './usecases/complete-totp-login/complete-totp-login.command';
import { CompleteTotpLogin } from './usecases/complete-totp-login/complete-totp-login.usecase';
import { CallerDto, DescribeCaller } from './usecases/describe-caller/describe-caller.usecase';
import { EnableTotpDto, EnableTotpResultDto } from './usecases/enable-totp/enable-totp.command';
import { EnableTotp } from './usecases/enable-totp/enable-totp.usecase';
import { EnrolTotp, EnrolTotpResultDto } from './usecases/enrol-totp/enrol-totp.usecase';
import { LoginDto, LoginResultDto } from './usecases/login/login.command';
import { Login } from './usecases/login/login.usecase';
import { Logout } from './usecases/logout/logout.usecase';

@ApiTags('auth')
@Controller('api/v1/auth')
export class AuthController {
  constructor(
    private readonly login: Login,
    private readonly completeTotpLogin: CompleteTotpLogin,
    private readonly logout: Logout,
    private readonly describeCaller: DescribeCaller,
    private readonly enrolTotp: EnrolTotp,
    private readonly enableTotp: EnableTotp,
    private readonly cookies: SessionCookies,
  ) {}

  /** Password sign-in: sets the `pa_session` cookie; with TOTP enabled the session is pending. */
  @Post('login')
  @Public()
  @HttpCode(200)
  @ZodResponse({ status: 200, type: LoginResultDto })
  async signIn(@Body() body: LoginDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const { session, totpRequired } = await this.login.execute(body, request.ip);
    this.cookies.issue(reply, session);
    return { csrfToken: session.csrfToken, totpRequired };
  }

  /** Completes a pending sign-in with a TOTP code or a recovery code; the session cookie is replaced. */
  @Post('totp')
  @Authenticated({ principals: ['user'], allowPendingTotp: true })
  @HttpCode(200)
  @ZodResponse({ status: 200, type: CompleteTotpLoginResultDto })
  async secondFactor(@Body() body: CompleteTotpLoginDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply) {
    const session = await this.completeTotpLogin.execute(sessionIdFrom(request) as string, body);
    this.cookies.issue(reply, session);
    return { csrfToken: session.csrfToken };
  }

  @Post('logout')
  @Authenticated({ principals: ['user'], allowPendingTotp: true })
  @HttpCode(204)
  async signOut(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<void> {
    await this.logout.execute(sessionIdFrom(request));
    this.cookies.clear(reply);
  }

  @Get('me')
  @Authenticated()
  @ZodResponse({ status: 200, type: CallerDto })
  me(@Principal() principal: Principal) {
    return this.describeCaller.execute(principal);
  }

  /** Starts TOTP enrolment; the seed is shown this once. */
  @Post('totp/enrol')
  @Authenticated({ principals: ['user'] })
  @HttpCode(200)
  @ZodResponse({ status: 200, type: EnrolTotpResultDto })
  enrol(@Principal() principal: Principal) {
    return this.enrolTotp.execute(principal.id);
  }

  /** Enables TOTP with a code from the enrolled seed; returns ten single-use recovery codes, shown this once. */
  @Post('totp/verify')
  @Authenticated({ principals: ['user'] })
  @HttpCode(200)
  @ZodResponse({ status: 200, type: EnableTotpResultDto })
  verify(@Principal() principal: Principal, @Body() body: EnableTotpDto) {
    return this.enableTotp.execute(principal.id, body);
  }
}
