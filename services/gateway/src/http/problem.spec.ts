import { BadRequestException, HttpException, NotFoundException } from '@nestjs/common';
import { DomainError, TransientError, ValidationError } from '@packetagent/contracts';
import { CommandTimeoutError, RemoteCommandError } from '@packetagent/bus';
import { ConcurrencyError } from '@packetagent/eventstore';
import { RateLimitedError } from '../identity/errors';
import { problemStatusFor, toProblem } from './problem';

class WidgetNotFoundError extends DomainError {
  readonly code = 'widget_not_found';
}

class DeploymentRevokedError extends DomainError {
  readonly code = 'deployment_revoked';
}

describe(problemStatusFor.name, () => {
  it('maps the listed codes', () => {
    expect(problemStatusFor('validation_failed')).toBe(400);
    expect(problemStatusFor('not_found')).toBe(404);
    expect(problemStatusFor('concurrency_conflict')).toBe(409);
    expect(problemStatusFor('event_too_large')).toBe(413);
    expect(problemStatusFor('rate_limited')).toBe(429);
    expect(problemStatusFor('transient_failure')).toBe(503);
  });

  it('maps unlisted codes by their suffix', () => {
    expect(problemStatusFor('worker_not_found')).toBe(404);
    expect(problemStatusFor('version_conflict')).toBe(409);
    expect(problemStatusFor('artifact_too_large')).toBe(413);
  });

  it('maps any other code to 422, or 503 when a retry may succeed', () => {
    expect(problemStatusFor('widget_refused')).toBe(422);
    expect(problemStatusFor('provider_hiccup', true)).toBe(503);
  });
});

describe(toProblem.name, () => {
  const requestId = 'req-12345678';

  it('turns a ValidationError into 400 with every issue', () => {
    const sut = toProblem(new ValidationError('bad', [{ path: 'name', message: 'required' }]), requestId);
    expect(sut.status).toBe(400);
    expect(sut.body).toEqual({
      type: 'urn:packetagent:problem:validation_failed',
      title: 'Bad Request',
      status: 400,
      detail: 'the request is not valid',
      code: 'validation_failed',
      requestId,
      errors: [{ path: 'name', message: 'required' }],
    });
  });

  it('maps domain errors by code and keeps their message as the detail', () => {
    expect(toProblem(new WidgetNotFoundError('no widget w1'), requestId).body).toMatchObject({ status: 404, code: 'widget_not_found', detail: 'no widget w1' });
    expect(toProblem(new DeploymentRevokedError('revoked'), requestId).status).toBe(409);
    expect(toProblem(new ConcurrencyError('run-1', 1, 2), requestId).status).toBe(409);
    expect(toProblem(new TransientError('database restarting'), requestId).status).toBe(503);
    expect(toProblem(new CommandTimeoutError('intake.create_worker', 5_000), requestId).status).toBe(503);
  });

  it('sends Retry-After for a rate-limited error', () => {
    const sut = toProblem(new RateLimitedError(42), requestId);
    expect(sut.status).toBe(429);
    expect(sut.headers).toEqual({ 'retry-after': '42' });
  });

  it('maps a remote command error by its code, with the remote issues', () => {
    const invalid = toProblem(new RemoteCommandError('validation_failed', 'invalid', false, [{ path: 'tools.0.verbs', message: 'empty' }]), requestId);
    expect(invalid.status).toBe(400);
    expect(invalid.body.errors).toEqual([{ path: 'tools.0.verbs', message: 'empty' }]);
    expect(toProblem(new RemoteCommandError('worker_not_found', 'no worker', false), requestId).status).toBe(404);
    expect(toProblem(new RemoteCommandError('concurrency_conflict', 'raced', true), requestId).status).toBe(409);
  });

  it('maps the computer codes: unreachable is 422 even when retrying may help, a damaged record 409', () => {
    expect(toProblem(new RemoteCommandError('computer_unreachable', 'no route to host', true), requestId).status).toBe(422);
    expect(toProblem(new RemoteCommandError('computer_record_unreadable', 'record version 2', false), requestId).status).toBe(409);
    expect(toProblem(new RemoteCommandError('host_key_changed', 'changed', false), requestId).status).toBe(409);
    expect(toProblem(new RemoteCommandError('computer_version_conflict', 'changed since version 3', false), requestId).status).toBe(409);
    expect(toProblem(new RemoteCommandError('computer_not_found', 'no computer', false), requestId).status).toBe(404);
  });

  it('hides a remote internal error and any unknown error behind a generic 500 naming the request id', () => {
    for (const error of [new RemoteCommandError('internal_error', 'remote stack', true), new Error('password=hunter2'), 'a string']) {
      const sut = toProblem(error, requestId);
      expect(sut.status).toBe(500);
      expect(sut.body.detail).not.toMatch(/hunter2|remote stack/);
      expect(sut.body.requestId).toBe(requestId);
      expect(sut.cause).toBe(error);
    }
  });

  it('maps Nest HTTP exceptions by status without echoing the URL of an unknown route', () => {
    expect(toProblem(new BadRequestException('nope'), requestId).body).toMatchObject({ status: 400, code: 'bad_request', detail: 'nope' });
    const notFound = toProblem(new NotFoundException('Cannot GET /x?token=abc'), requestId);
    expect(notFound.body).toMatchObject({ status: 404, code: 'not_found' });
    expect(notFound.body.detail).not.toContain('token');
    expect(toProblem(new HttpException('Request body is too large', 413), requestId).body).toMatchObject({ status: 413, code: 'payload_too_large' });
    expect(toProblem(new HttpException('broken', 502), requestId).status).toBe(500);
  });

  it('maps Fastify client errors such as malformed JSON without quoting the body', () => {
    const syntax = Object.assign(new SyntaxError('Unexpected token s in JSON: secret'), { statusCode: 400 });
    const sut = toProblem(syntax, requestId);
    expect(sut.body).toMatchObject({ status: 400, code: 'bad_request', detail: 'the request body is not valid JSON' });
  });
});
