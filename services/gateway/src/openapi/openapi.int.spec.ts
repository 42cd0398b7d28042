import { Body, Controller, Get, Param, Post } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { createZodDto, ZodResponse } from 'nestjs-zod';
import { z } from 'zod';
import { RequirePermission } from '../access/access.decorators';
import { startGatewayTestApp, type GatewayTestApp } from '../testing/gateway-app.testkit';
import { OpenApiController } from './openapi.controller';

class GadgetDto extends createZodDto(
  z.object({
    id: z.string(),
    size: z.number().int(),
    note: z.string().nullable(),
    weight: z.number().nullable(),
    nickname: z.string().nullable().default(null),
    label: z.union([z.string(), z.number()]),
    tags: z.array(z.string()),
  }),
) {}
class RenameGadgetDto extends createZodDto(z.object({ nickname: z.string().nullable(), enabled: z.boolean().nullable() })) {}

/** Stands for a controller of another module, registered beside the gateway's. */
@ApiTags('gadgets')
@Controller('api/v1/workspaces/:ws/gadgets')
class GadgetsController {
  @Get(':gadgetId')
  @RequirePermission('inspect')
  @ZodResponse({ status: 200, type: GadgetDto })
  get(@Param('gadgetId') gadgetId: string) {
    return { id: gadgetId, size: 1, note: null, weight: null, label: 'a', tags: [] };
  }

  @Post(':gadgetId/name')
  @RequirePermission('author')
  @ZodResponse({ status: 200, type: GadgetDto })
  rename(@Param('gadgetId') gadgetId: string, @Body() body: RenameGadgetDto) {
    return { id: gadgetId, size: 1, note: null, weight: null, nickname: body.nickname, label: 1, tags: [] };
  }
}

interface Document {
  openapi: string;
  paths: Record<
    string,
    Record<string, { security?: unknown[]; parameters?: { name: string; in: string }[]; requestBody?: unknown; responses: Record<string, unknown>; 'x-required-permission'?: string }>
  >;
  components: { securitySchemes: Record<string, unknown>; schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }> };
  servers?: { url: string }[];
}

describe(OpenApiController.name, () => {
  let sut: GatewayTestApp;

  beforeAll(async () => {
    sut = await startGatewayTestApp({ controllers: [GadgetsController], gateway: { publicUrl: 'https://packetagent.example.com' } });
  });

  afterAll(async () => {
    await sut.close();
  });

  it('serves an OpenAPI 3.1.0 document without authentication, listing every registered route', async () => {
    const answer = await sut.request<Document>('GET', '/api/v1/openapi.json');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    const document = JSON.parse(answer.text) as Document;
    expect(document.openapi).toBe('3.1.0');
    expect(document.servers).toEqual([{ url: 'https://packetagent.example.com', description: 'this installation' }]);
    const operations = Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));
    expect(operations).toEqual(
      expect.arrayContaining([
        'POST /api/v1/setup',
        'POST /api/v1/auth/login',
        'POST /api/v1/auth/logout',
        'POST /api/v1/auth/totp',
        'GET /api/v1/auth/me',
        'POST /api/v1/auth/totp/enrol',
        'POST /api/v1/auth/totp/verify',
        'POST /api/v1/workspaces',
        'GET /api/v1/workspaces',
        'GET /api/v1/workspaces/{ws}/api-keys',
        'POST /api/v1/workspaces/{ws}/api-keys',
        'DELETE /api/v1/workspaces/{ws}/api-keys/{id}',
        'GET /api/v1/workspaces/{ws}/gadgets/{gadgetId}',
      ]),
    );
    expect(operations).not.toContain('GET /api/v1/openapi.json');
  });

  it('declares every path parameter of every operation', async () => {
    const document = (await sut.request<Document>('GET', '/api/v1/openapi.json')).body;
    const undeclared = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).flatMap(([method, operation]) =>
        [...path.matchAll(/\{([^}]+)\}/g)]
          .map((match) => match[1])
          .filter((name) => !operation.parameters?.some((parameter) => parameter.in === 'path' && parameter.name === name))
          .map((name) => `${method} ${path}: ${name}`),
      ),
    );
    expect(undeclared).toEqual([]);
  });

  it('describes bodies from the zod DTOs, security schemes, permissions and problem answers', async () => {
    const document = (await sut.request<Document>('GET', '/api/v1/openapi.json')).body;
    expect(Object.keys(document.components.securitySchemes).sort()).toEqual(['actorToken', 'bearer', 'cookie', 'csrf']);
    expect(document.components.securitySchemes['actorToken']).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(document.components.securitySchemes['bearer']).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(document.components.securitySchemes['cookie']).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'pa_session' });

    const login = document.paths['/api/v1/auth/login']!['post']!;
    expect(JSON.stringify(login.requestBody)).toContain('LoginDto');
    expect(document.components.schemas['LoginDto']).toMatchObject({ required: expect.arrayContaining(['email', 'password']) });
    expect(login.security).toBeUndefined();

    const createKey = document.paths['/api/v1/workspaces/{ws}/api-keys']!['post']!;
    expect(createKey['x-required-permission']).toBe('admin');
    expect(createKey.security).toEqual([{ bearer: [] }, { cookie: [], csrf: [] }]);
    expect(createKey.responses['default']).toEqual({
      description: 'an error',
      content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
    });
    expect(document.components.schemas['Problem']).toMatchObject({ required: expect.arrayContaining(['type', 'title', 'status', 'detail']) });
    expect(document.paths['/api/v1/workspaces/{ws}/gadgets/{gadgetId}']!['get']!['x-required-permission']).toBe('inspect');
    expect(document.paths['/api/v1/auth/logout']!['post']!.security).toEqual([{ cookie: [], csrf: [] }]);
  });

  it('describes a nullable field as nullable, not as an array of its type, in answers and in bodies', async () => {
    const { schemas } = (await sut.request<Document>('GET', '/api/v1/openapi.json')).body.components;
    expect(schemas['GadgetDto_Output']?.properties).toEqual({
      id: { type: 'string' },
      size: expect.objectContaining({ type: 'integer' }),
      note: { type: ['string', 'null'] },
      weight: { type: ['number', 'null'] },
      nickname: { type: ['string', 'null'], default: null },
      label: { type: ['string', 'number'] },
      tags: { type: 'array', items: { type: 'string' } },
    });
    expect(schemas['RenameGadgetDto']?.properties).toEqual({ nickname: { type: ['string', 'null'] }, enabled: { type: ['boolean', 'null'] } });
  });

  it('describes every operation and who may call it, declares every tag, and labels bearer tokens opaque', async () => {
    const document = (await sut.request<Document & { tags: { name: string; description: string }[] }>('GET', '/api/v1/openapi.json')).body;
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({ key: `${method} ${path}`, ...(operation as { description?: string; tags?: string[] }) })),
    );
    expect(operations.filter((operation) => !operation.description)).toEqual([]);
    expect(document.paths['/api/v1/workspaces/{ws}/api-keys']!['post']!).toMatchObject({ description: expect.stringMatching(/the `admin` permission in the workspace/) });
    const declared = document.tags.map((tag) => tag.name);
    expect(operations.flatMap((operation) => operation.tags ?? []).filter((tag) => !declared.includes(tag))).toEqual([]);
    expect(document.components.securitySchemes['bearer']).not.toMatchObject({ bearerFormat: 'JWT' });
    expect(document.components.securitySchemes['actorToken']).not.toMatchObject({ bearerFormat: 'JWT' });
  });
});
