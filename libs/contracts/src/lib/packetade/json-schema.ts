import { z } from 'zod';
import { PackageWorkerSchema, WorkerPackageSchema } from './worker-package.v1';

export const WORKER_PACKAGE_JSON_SCHEMA_ID = 'https://packetagent.dev/schemas/worker-package.v1.json';
/** Where the generated schema is committed, from the repository root. */
export const WORKER_PACKAGE_JSON_SCHEMA_FILE = 'docs/schemas/worker-package.v1.schema.json';

/**
 * JSON Schema (draft 2020-12) of a worker package, generated from WorkerPackageSchema for
 * editors and other languages. It states the shape only: the worker is checked as a worker
 * definition, and `requires` against it, by parseWorkerPackage alone.
 */
export function workerPackageJsonSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(WorkerPackageSchema, {
    target: 'draft-2020-12',
    override: (ctx) => {
      if (ctx.zodSchema !== PackageWorkerSchema) return;
      const description = ctx.jsonSchema.description;
      for (const key of Object.keys(ctx.jsonSchema)) delete (ctx.jsonSchema as Record<string, unknown>)[key];
      Object.assign(ctx.jsonSchema, { type: 'object', description });
    },
  }) as Record<string, unknown>;
  const { $schema, ...rest } = generated;
  return { $schema, $id: WORKER_PACKAGE_JSON_SCHEMA_ID, title: 'PacketAgent worker package (packetagent/v1)', ...rest };
}

/** The committed file's exact text: 2-space indentation and a trailing newline. */
export function workerPackageJsonSchemaText(): string {
  return `${JSON.stringify(workerPackageJsonSchema(), null, 2)}\n`;
}
