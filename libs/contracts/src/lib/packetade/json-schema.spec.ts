import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { WORKER_PACKAGE_JSON_SCHEMA_FILE, workerPackageJsonSchema, workerPackageJsonSchemaText } from './json-schema';

const COMMITTED = resolve(__dirname, '../../../../..', WORKER_PACKAGE_JSON_SCHEMA_FILE);
const REGENERATE = `node -r @swc-node/register -e "require('fs').writeFileSync('${WORKER_PACKAGE_JSON_SCHEMA_FILE}', require('./libs/contracts/src/lib/packetade/json-schema').workerPackageJsonSchemaText())"`;

describe(workerPackageJsonSchema.name, () => {
  it('is a draft 2020-12 schema with its $id, refusing unknown keys', () => {
    const sut = workerPackageJsonSchema();
    expect(sut).toMatchObject({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $id: 'https://packetagent.dev/schemas/worker-package.v1.json',
      type: 'object',
      required: ['apiVersion', 'kind', 'worker', 'provenance', 'requires'],
      additionalProperties: false,
      properties: {
        apiVersion: { const: 'packetagent/v1' },
        kind: { const: 'WorkerPackage' },
        worker: { type: 'object', description: expect.stringContaining('worker definition') },
        provenance: { properties: { source: { properties: { commit: { pattern: '^[0-9a-f]{7,64}$' } } }, builtAt: { format: 'date-time' } } },
        requires: { properties: { tools: { type: 'array', uniqueItems: true, maxItems: 64 } } },
      },
    });
  });

  it('leaves the worker to the worker definition format', () => {
    expect(Object.keys((workerPackageJsonSchema()['properties'] as Record<string, object>)['worker']!).sort()).toEqual(['description', 'type']);
  });

  it('is the schema committed under docs/schemas', () => {
    const committed = readFileSync(COMMITTED, 'utf8');
    // On failure the object shown carries the command that regenerates the file.
    expect({ file: WORKER_PACKAGE_JSON_SCHEMA_FILE, upToDate: committed === workerPackageJsonSchemaText(), regenerate: REGENERATE }).toEqual({
      file: WORKER_PACKAGE_JSON_SCHEMA_FILE,
      upToDate: true,
      regenerate: REGENERATE,
    });
  });
});
