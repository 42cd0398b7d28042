import { ValidationError } from '@packetagent/contracts';

export const YAML_CONTENT_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml'];

/** A definition arrives as YAML text (kept verbatim, so errors keep their line numbers) or as parsed JSON. */
export function definitionSource(contentType: string | undefined, body: unknown): { source: string; format: 'json' | 'yaml' } {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (YAML_CONTENT_TYPES.includes(type)) {
    if (typeof body !== 'string') throw new ValidationError('invalid definition', [{ path: '(body)', message: 'expected YAML text' }]);
    return { source: body, format: 'yaml' };
  }
  if (body === undefined || body === null || typeof body !== 'object') {
    throw new ValidationError('invalid definition', [{ path: '(body)', message: 'expected a JSON object or YAML with Content-Type application/yaml' }]);
  }
  return { source: JSON.stringify(body), format: 'json' };
}
