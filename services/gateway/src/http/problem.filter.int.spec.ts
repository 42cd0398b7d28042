import { Body, Controller, Get, Post } from '@nestjs/common';
import { createZodDto } from 'nestjs-zod';
import { z } from 'zod';
import { DomainError } from '@packetagent/contracts';
import { RemoteCommandError } from '@packetagent/bus';
import { Public, RequirePermission } from '../access/access.decorators';
import { completeSetup, startGatewayTestApp, type GatewayTestApp } from '../testing/gateway-app.testkit';
import { ProblemFilter } from './problem.filter';

class EchoDto extends createZodDto(z.object({ name: z.string().min(1), count: z.number().int() })) {}

class WidgetNotFoundError extends DomainError {
  readonly code = 'widget_not_found';
}

@Controller('probe')
class ProbeController {
  @Post('echo')
  @Public()
  echo(@Body() body: EchoDto): EchoDto {
    return body;
  }

  @Get('boom')
  @Public()
  boom(): never {
    throw new Error('connection string postgres://admin:hunter2@db');
  }

  @Get('widget')
  @Public()
  widget(): never {
    throw new WidgetNotFoundError('no widget w1');
  }

  @Get('remote')
  @Public()
  remote(): never {
    throw new RemoteCommandError('validation_failed', 'invalid definition', false, [{ path: 'tools.0.verbs', message: 'must not be empty' }]);
  }

  @Get('unmarked')
  unmarked(): { served: true } {
    return { served: true };
  }

  @Get('no-workspace')
  @RequirePermission('inspect')
  noWorkspace(): { served: true } {
    return { served: true };
  }
}

const problemShape = (status: number) => ({
  type: expect.stringMatching(/^urn:packetagent:problem:[a-z_0-9]+$/),
  title: expect.any(String),
  status,
  detail: expect.any(String),
  code: expect.any(String),
  requestId: expect.any(String),
});

describe(ProblemFilter.name, () => {
  let sut: GatewayTestApp;
  let ownerKey: string;

  beforeAll(async () => {
    sut = await startGatewayTestApp({ controllers: [ProbeController], bodyLimitBytes: 4_096 });
    ({ apiKey: ownerKey } = await completeSetup(sut));
  });

  afterAll(async () => {
    await sut.close();
  });

  it('answers a validation failure with 400 and every {path, message}', async () => {
    const answer = await sut.request('POST', '/probe/echo', { body: { name: '', count: 1.5 } });
    expect(answer.status).toBe(400);
    expect(answer.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
    expect(answer.body).toEqual({
      ...problemShape(400),
      code: 'validation_failed',
      errors: [
        { path: 'name', message: expect.any(String) },
        { path: 'count', message: expect.any(String) },
      ],
    });
  });

  it('answers malformed JSON with 400 without quoting the body', async () => {
    const answer = await sut.request('POST', '/probe/echo', { rawBody: '{"name": "secret-value', headers: { 'content-type': 'application/json' } });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ ...problemShape(400), code: 'bad_request', detail: expect.stringMatching(/not valid JSON/) });
    expect(answer.text).not.toContain('secret-value');
  });

  it('answers a missing credential with 401', async () => {
    const answer = await sut.request('GET', '/api/v1/auth/me');
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual({ ...problemShape(401), code: 'unauthenticated' });
  });

  it('refuses a route without an access marker with 403, and named it at start-up', async () => {
    const answer = await sut.request('GET', '/probe/unmarked', { headers: { authorization: `Bearer ${ownerKey}` } });
    expect(answer.status).toBe(403);
    expect(answer.body).toEqual({ ...problemShape(403), code: 'access_policy_missing' });
    expect(answer.text).not.toContain('served');
    expect(sut.logger.lines).toContainEqual({ level: 'warn', message: expect.stringContaining('ProbeController.unmarked') });
  });

  it('refuses @RequirePermission on a route without :ws', async () => {
    const answer = await sut.request('GET', '/probe/no-workspace', { headers: { authorization: `Bearer ${ownerKey}` } });
    expect(answer.status).toBe(403);
    expect(answer.body).toMatchObject({ code: 'access_policy_missing' });
  });

  it('answers an unknown route with a 404 problem', async () => {
    const answer = await sut.request('GET', '/nowhere?token=abc');
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({ ...problemShape(404), code: 'not_found', detail: 'no route matches this method and path' });
  });

  it('answers a body over the limit with 413, and a wrong media type with 415', async () => {
    const large = await sut.request('POST', '/probe/echo', { body: { name: 'x'.repeat(10_000), count: 1 } });
    expect(large.status).toBe(413);
    expect(large.body).toEqual({ ...problemShape(413), code: 'payload_too_large' });

    const xml = await sut.request('POST', '/probe/echo', { rawBody: '<name>x</name>', headers: { 'content-type': 'application/xml' } });
    expect(xml.status).toBe(415);
    expect(xml.body).toEqual({ ...problemShape(415), code: 'unsupported_media_type' });
  });

  it('maps a domain error by its code and a remote command error with its issues', async () => {
    const widget = await sut.request('GET', '/probe/widget');
    expect(widget.body).toEqual({ ...problemShape(404), code: 'widget_not_found', detail: 'no widget w1' });
    const remote = await sut.request('GET', '/probe/remote');
    expect(remote.body).toEqual({ ...problemShape(400), code: 'validation_failed', detail: 'invalid definition', errors: [{ path: 'tools.0.verbs', message: 'must not be empty' }] });
  });

  it('answers an unexpected error with a generic 500 naming the request id; the cause goes to the log only', async () => {
    const answer = await sut.request('GET', '/probe/boom');
    expect(answer.status).toBe(500);
    const requestId = answer.headers.get('x-request-id');
    expect(answer.body).toEqual({ ...problemShape(500), code: 'internal_error', requestId });
    expect(answer.text).not.toContain('hunter2');
    expect(sut.logger.lines).toContainEqual({ level: 'error', message: expect.stringMatching(new RegExp(`request=${requestId}.*hunter2`)) });
  });

  it('echoes a well-formed x-request-id and replaces a malformed one', async () => {
    const kept = await sut.request('GET', '/probe/widget', { headers: { 'x-request-id': 'client-chosen-id-0001' } });
    expect(kept.headers.get('x-request-id')).toBe('client-chosen-id-0001');
    expect(kept.body).toMatchObject({ requestId: 'client-chosen-id-0001' });

    const replaced = await sut.request('GET', '/probe/widget', { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(replaced.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('logs one access line per request with route pattern, status, time, request id and principal, and no headers or query', async () => {
    const answer = await sut.request('GET', '/api/v1/workspaces?secret-query=1', { headers: { authorization: `Bearer ${ownerKey}`, 'x-request-id': 'access-log-check-01' } });
    expect(answer.status).toBe(200);
    const keyId = ownerKey.split('_')[1];
    const lines = sut.logger.lines.filter((line) => line.message.includes('request=access-log-check-01'));
    expect(lines).toEqual([{ level: 'log', message: expect.stringMatching(new RegExp(`^GET /api/v1/workspaces 200 \\d+\\.\\dms request=access-log-check-01 principal=api_key:${keyId}$`)) }]);
    const everything = sut.logger.text();
    expect(everything).not.toContain('secret-query');
    expect(everything).not.toContain(ownerKey);
  });
});
