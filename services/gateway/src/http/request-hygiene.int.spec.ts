import { Body, Controller, Get, Header, Param, Post, Query } from '@nestjs/common';
import { createZodDto } from 'nestjs-zod';
import { z } from 'zod';
import { Public } from '../access/access.decorators';
import { startGatewayTestApp, type GatewayTestApp } from '../testing/gateway-app.testkit';
import { installRequestHygiene } from './request-hygiene';

class StrictDto extends createZodDto(z.strictObject({ name: z.string().max(100) })) {}

@Controller('probe')
class ProbeController {
  @Get('items/:id')
  @Public()
  read(@Param('id') id: string, @Query() query: Record<string, unknown>): { id: string; query: Record<string, unknown> } {
    return { id, query };
  }

  @Post('items/:id')
  @Public()
  write(@Param('id') id: string, @Body() body: unknown): { id: string; body: unknown } {
    return { id, body };
  }

  @Post('strict')
  @Public()
  strict(@Body() body: StrictDto): StrictDto {
    return body;
  }

  @Get('cached')
  @Public()
  @Header('cache-control', 'private, max-age=60')
  cached(): { cached: true } {
    return { cached: true };
  }
}

const problem = (status: number, code: string) => ({ type: `urn:packetagent:problem:${code}`, title: expect.any(String), status, code, detail: expect.any(String), requestId: expect.any(String) });
const nested = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

describe(installRequestHygiene.name, () => {
  let sut: GatewayTestApp;

  beforeAll(async () => {
    sut = await startGatewayTestApp({ controllers: [ProbeController] });
  });
  afterAll(() => sut.close());

  it('refuses a NUL or an unpaired surrogate in a path parameter, a query value or key, naming where', async () => {
    const inPath = await sut.request('GET', '/probe/items/%00');
    expect(inPath.status).toBe(400);
    expect(inPath.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
    expect(inPath.body).toEqual({ ...problem(400, 'invalid_characters'), errors: [{ path: 'id', message: expect.stringContaining('NUL') }] });

    const inQuery = await sut.request('GET', '/probe/items/a?deploymentId=x%00');
    expect(inQuery.body).toMatchObject({ code: 'invalid_characters', errors: [{ path: 'deploymentId' }] });
    const inKey = await sut.request('GET', '/probe/items/a?a%00b=1');
    expect(inKey.body).toMatchObject({ code: 'invalid_characters', errors: [{ path: '(key)' }] });
    const repeated = await sut.request('GET', '/probe/items/a?tag=ok&tag=%00');
    expect(repeated.body).toMatchObject({ code: 'invalid_characters', errors: [{ path: 'tag.1' }] });
  });

  it('refuses a NUL or an unpaired surrogate anywhere in a JSON body, in keys as in values', async () => {
    const value = await sut.request('POST', '/probe/items/a', { rawBody: '{"name":"a\\u0000b","list":["ok","\\ud800"]}', headers: { 'content-type': 'application/json' } });
    expect(value.status).toBe(400);
    expect(value.body).toEqual({
      ...problem(400, 'invalid_characters'),
      errors: [
        { path: 'name', message: expect.any(String) },
        { path: 'list.1', message: expect.any(String) },
      ],
    });
    const key = await sut.request('POST', '/probe/items/a', { rawBody: '{"a\\u0000":1}', headers: { 'content-type': 'application/json' } });
    expect(key.body).toMatchObject({ code: 'invalid_characters', errors: [{ path: '(key)' }] });
    const form = await sut.request('POST', '/probe/items/a', { rawBody: 'a=%00', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(form.body).toMatchObject({ code: 'invalid_characters', errors: [{ path: 'a' }] });
    const paired = await sut.request('POST', '/probe/items/a', { body: { name: 'emoji \u{1F600} and ü' } });
    expect(paired.status).toBe(201);
  });

  it('refuses a cursor that is not base64url of printable text before any route decodes it', async () => {
    const nul = await sut.request('GET', '/probe/items/a?cursor=djE6AA');
    expect(nul.status).toBe(400);
    expect(nul.body).toEqual({ ...problem(400, 'invalid_cursor'), errors: [{ path: 'cursor', message: 'not a cursor this API issued' }] });
    expect((await sut.request('GET', '/probe/items/a?cursor=not*base64')).body).toMatchObject({ code: 'invalid_cursor' });
    const issued = Buffer.from('v1:0190d6b8-7a2e-7c3d-8e4f-5a6b7c8d9e0f').toString('base64url');
    expect((await sut.request('GET', `/probe/items/a?cursor=${issued}`)).status).toBe(200);
  });

  it('refuses a body nested deeper than 64 levels with 400, and takes one of 64', async () => {
    const deep = await sut.request('POST', '/probe/items/a', { rawBody: nested(3_000), headers: { 'content-type': 'application/json' } });
    expect(deep.status).toBe(400);
    expect(deep.body).toEqual({ ...problem(400, 'nesting_too_deep'), detail: 'the request body nests deeper than 64 levels' });
    const brackets = await sut.request('POST', '/probe/items/a', { rawBody: '['.repeat(100_000) + ']'.repeat(100_000), headers: { 'content-type': 'application/json' } });
    expect(brackets.body).toMatchObject({ status: 400, code: 'nesting_too_deep' });
    expect((await sut.request('POST', '/probe/items/a', { rawBody: nested(63), headers: { 'content-type': 'application/json' } })).status).toBe(201);
  });

  it('refuses a body in any charset but UTF-8 with 415', async () => {
    for (const charset of ['utf-7', 'iso-8859-1', '"utf-16"']) {
      const answer = await sut.request('POST', '/probe/items/a', { rawBody: '{}', headers: { 'content-type': `application/json; charset=${charset}` } });
      expect(answer.status).toBe(415);
      expect(answer.body).toEqual(problem(415, 'unsupported_charset'));
    }
    for (const charset of ['utf-8', 'UTF-8', 'utf8']) {
      expect((await sut.request('POST', '/probe/items/a', { rawBody: '{}', headers: { 'content-type': `application/json; charset=${charset}` } })).status).toBe(201);
    }
  });

  it('lists the first 20 issues of a body with 50,000 unknown keys and counts them all, in a few KB', async () => {
    const body = `{${Array.from({ length: 50_000 }, (_, index) => `"k${index}":0`).join(',')}}`;
    const answer = await sut.request<{ errors: unknown[]; errorCount?: number }>('POST', '/probe/strict', { rawBody: body, headers: { 'content-type': 'application/json' } });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 'validation_failed' });
    expect(answer.body.errors.length).toBeLessThanOrEqual(20);
    expect(Buffer.byteLength(answer.text)).toBeLessThan(4_096);
    const many = await sut.request<{ errors: unknown[]; errorCount?: number }>('POST', '/probe/items/a', {
      rawBody: `{${Array.from({ length: 500 }, (_, index) => `"k${index}":"\\u0000"`).join(',')}}`,
      headers: { 'content-type': 'application/json' },
    });
    expect(many.body.errors).toHaveLength(20);
  });

  it('answers a path that is not UTF-8 and an over-long path parameter as problem+json', async () => {
    const badUrl = await sut.request('GET', '/probe/items/%ff%fe');
    expect(badUrl.status).toBe(400);
    expect(badUrl.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
    expect(badUrl.body).toEqual(problem(400, 'invalid_url'));
    const long = await sut.request('POST', `/probe/items/${'x'.repeat(101)}`, { body: {} });
    expect(long.status).toBe(414);
    expect(long.body).toEqual(problem(414, 'path_parameter_too_long'));
  });

  it('answers an empty JSON body, an unsupported media type and a body too large by their own codes', async () => {
    const empty = await sut.request('POST', '/probe/items/a', { rawBody: '', headers: { 'content-type': 'application/json' } });
    expect(empty.body).toEqual(problem(400, 'empty_body'));
    const xml = await sut.request('POST', '/probe/items/a', { rawBody: '<a/>', headers: { 'content-type': 'application/xml' } });
    expect(xml.body).toEqual(problem(415, 'unsupported_media_type'));
    const large = await sut.request('POST', '/probe/items/a', { body: { name: 'z'.repeat(2 * 1024 * 1024) } });
    expect(large.body).toEqual(problem(413, 'payload_too_large'));
  });

  it('sends the security headers on every answer, keeping a cache policy a route chose', async () => {
    const answer = await sut.request('GET', '/probe/items/a');
    expect(Object.fromEntries([...answer.headers].filter(([name]) => ['x-content-type-options', 'cache-control', 'referrer-policy', 'x-frame-options', 'content-security-policy'].includes(name)))).toEqual({
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
      'x-frame-options': 'DENY',
      'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
    });
    const refused = await sut.request('GET', '/probe/items/%00');
    expect(refused.headers.get('x-content-type-options')).toBe('nosniff');
    expect(refused.headers.get('cache-control')).toBe('no-store');
    expect((await sut.request('GET', '/probe/cached')).headers.get('cache-control')).toBe('private, max-age=60');
  });
});
