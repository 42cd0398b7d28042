/**
 * Malformed requests derived from an OpenAPI document: for every operation, bad bytes in each
 * path and query parameter, and bad bodies of every kind (media types, charsets, framing, JSON
 * that is broken, deep, wide, or of the wrong shape for its schema).
 */

type Schema = { $ref?: string; type?: string | string[]; properties?: Record<string, Schema>; required?: string[]; anyOf?: Schema[]; oneOf?: Schema[]; allOf?: Schema[] };
interface Parameter {
  name: string;
  in: string;
  schema?: Schema;
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

export interface MalformedRequest {
  /** `METHOD /template` of the operation. */
  operation: string;
  what: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Sent byte for byte over a socket, because fetch would correct it. */
  raw?: (path: string, headers: Record<string, string>) => string;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
/** Percent-encoded, as they travel in a URL: NUL, an unpaired surrogate (CESU-8), bytes that are not UTF-8. */
const BAD_URL_VALUES: Record<string, string> = {
  NUL: '%00',
  'NUL inside': 'a%00b',
  'unpaired surrogate': '%ED%A0%80',
  'not UTF-8': '%ff%fe',
  'lone percent': '%',
  'over-long (101)': 'x'.repeat(101),
  'over-long (4000)': 'y'.repeat(4_000),
  'path traversal': '..%2F..%2Fetc',
};

function resolve(schema: Schema | undefined, document: OpenApiDocument): Schema | undefined {
  if (!schema?.$ref) return schema;
  return document.components?.schemas?.[schema.$ref.split('/').pop()!];
}

function wrongValueFor(schema: Schema | undefined): unknown {
  const type = Array.isArray(schema?.type) ? schema!.type[0] : schema?.type;
  switch (type) {
    case 'string':
      return 12_345;
    case 'integer':
    case 'number':
      return 'not a number';
    case 'boolean':
      return 'yes';
    case 'array':
      return { not: 'an array' };
    case 'object':
      return 'not an object';
    default:
      return [[{ unexpected: true }]];
  }
}

function nested(depth: number, leaf: string): string {
  return '{"a":'.repeat(depth) + leaf + '}'.repeat(depth);
}

export function malformedRequests(document: OpenApiDocument, pathValues: Record<string, string>, fallbackPathValue: string): MalformedRequest[] {
  const requests: MalformedRequest[] = [];
  for (const [template, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operationObject = item[method];
      if (!operationObject) continue;
      const operation = `${method.toUpperCase()} ${template}`;
      const fill = (overrides: Record<string, string> = {}) =>
        template.replace(/\{([^}]+)\}/g, (_match, name: string) => overrides[name] ?? pathValues[name] ?? fallbackPathValue);
      const push = (what: string, request: Omit<MalformedRequest, 'operation' | 'what' | 'method'> & { method?: string }) =>
        requests.push({ operation, what, method: method.toUpperCase(), ...request });
      const json = { 'content-type': 'application/json' };

      for (const parameter of operationObject.parameters ?? []) {
        for (const [label, value] of Object.entries(BAD_URL_VALUES)) {
          if (parameter.in === 'path') push(`path ${parameter.name}: ${label}`, { path: fill({ [parameter.name]: value }), headers: {} });
          if (parameter.in === 'query') push(`query ${parameter.name}: ${label}`, { path: `${fill()}?${encodeURIComponent(parameter.name)}=${value}`, headers: {} });
        }
        if (parameter.in === 'query') {
          push(`query ${parameter.name}: repeated`, { path: `${fill()}?${parameter.name}=1&${parameter.name}=2`, headers: {} });
          push(`query ${parameter.name}: base64 of NUL`, { path: `${fill()}?${parameter.name}=djE6AA`, headers: {} });
        }
      }
      push('query key holding NUL', { path: `${fill()}?a%00b=1`, headers: {} });
      push('query value of 10,000 characters', { path: `${fill()}?unknown=${'q'.repeat(10_000)}`, headers: {} });

      const bodies: Array<[string, string, string | Buffer]> = [
        ['XML body', 'application/xml', '<a>1</a>'],
        ['charset=utf-7', 'application/json; charset=utf-7', '{}'],
        ['charset=latin1', 'application/json; charset=iso-8859-1', '{}'],
        ['malformed JSON', 'application/json', '{"name": "value'],
        ['empty JSON body', 'application/json', ''],
        ['100,000 opening brackets', 'application/json', '['.repeat(100_000)],
        ['100,000 nested arrays', 'application/json', '['.repeat(100_000) + ']'.repeat(100_000)],
        ['3,000 nested objects', 'application/json', nested(3_000, '1')],
        ['overrides nested 3,000 deep', 'application/json', `{"overrides":${nested(3_000, '1')}}`],
        ['50,000 unknown keys', 'application/json', `{${Array.from({ length: 50_000 }, (_, index) => `"k${index}":0`).join(',')}}`],
        ['JSON null', 'application/json', 'null'],
        ['JSON array', 'application/json', '[]'],
        ['JSON string', 'application/json', '"text"'],
        ['JSON number', 'application/json', '42'],
        ['empty object', 'application/json', '{}'],
        ['body over the size limit', 'application/json', `{"name":"${'z'.repeat(2 * 1024 * 1024)}"}`],
        ['NUL in a key', 'application/json', '{"a\\u0000b":1}'],
        ['invalid UTF-8 bytes', 'application/json', Buffer.from([0x7b, 0x22, 0x6e, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])],
        ['YAML of 100,000 brackets', 'application/yaml', '['.repeat(100_000)],
        ['YAML nested 3,000 deep', 'application/yaml', '- '.repeat(3_000) + 'x'],
        ['YAML holding NUL', 'application/yaml', 'name: "a\u0000b"'],
        ['form body', 'application/x-www-form-urlencoded', 'a=%00'],
        ['multipart body', 'multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--'],
      ];
      for (const [what, contentType, body] of bodies) push(what, { path: fill(), headers: { 'content-type': contentType }, body });

      const schema = resolve(operationObject.requestBody?.content?.['application/json']?.schema, document);
      const properties = Object.entries(schema?.properties ?? {}).slice(0, 12);
      for (const [name, propertySchema] of properties) {
        const resolved = resolve(propertySchema, document);
        push(`property ${name}: wrong type`, { path: fill(), headers: json, body: JSON.stringify({ [name]: wrongValueFor(resolved) }) });
        push(`property ${name}: NUL`, { path: fill(), headers: json, body: JSON.stringify({ [name]: 'a\u0000b' }) });
        push(`property ${name}: unpaired surrogate`, { path: fill(), headers: json, body: JSON.stringify({ [name]: '\ud800x' }) });
        push(`property ${name}: 100,000 characters`, { path: fill(), headers: json, body: JSON.stringify({ [name]: 'w'.repeat(100_000) }) });
      }
      for (const name of schema?.required ?? []) {
        const rest = Object.fromEntries(properties.filter(([other]) => other !== name).map(([other]) => [other, 'x']));
        push(`required ${name} missing`, { path: fill(), headers: json, body: JSON.stringify(rest) });
      }

      const body = '{"name":"x"}';
      const framing = (headers: string, payload: string) => (path: string, common: Record<string, string>) =>
        `${method.toUpperCase()} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${Object.entries(common).map(([name, value]) => `${name}: ${value}\r\n`).join('')}${headers}Connection: close\r\n\r\n${payload}`;
      push('Content-Length shorter than the body', { path: fill(), headers: {}, raw: framing(`Content-Type: application/json\r\nContent-Length: 3\r\n`, body) });
      push('Content-Length not a number', { path: fill(), headers: {}, raw: framing(`Content-Type: application/json\r\nContent-Length: abc\r\n`, body) });
      push('two different Content-Lengths', { path: fill(), headers: {}, raw: framing(`Content-Type: application/json\r\nContent-Length: 12\r\nContent-Length: 7\r\n`, body) });
      push('Content-Length with chunked encoding', {
        path: fill(),
        headers: {},
        raw: framing(`Content-Type: application/json\r\nContent-Length: 12\r\nTransfer-Encoding: chunked\r\n`, `c\r\n${body}\r\n0\r\n\r\n`),
      });
      push('malformed chunk', { path: fill(), headers: {}, raw: framing(`Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n`, 'zz\r\n{}\r\n0\r\n\r\n') });
    }
  }
  return requests;
}
