import { z } from 'zod';
import type { CommandContext } from '../context';
import { ApiError, UsageError } from '../errors';
import { loadDocument } from '../documents';
import { findWorker } from './workers';

/** Only what the CLI needs before sending the file; the server validates the whole definition. */
const NamedSchema = z.looseObject({ name: z.string().min(1), description: z.unknown().optional() });
const CreatedSchema = z.looseObject({ id: z.string().min(1) });
const VersionSchema = z.looseObject({
  version: z.number().int().positive(),
  digest: z.string().min(1),
  /** false when the definition equals the latest version, which the server then keeps. */
  created: z.boolean().optional(),
});

export interface ApplyResult {
  workerId: string;
  name: string;
  workerCreated: boolean;
  version: number;
  digest: string;
  unchanged: boolean;
}

/** `packetagent worker apply -f FILE`: the worker by name (created when absent), then a version from the file. */
export async function applyWorker(context: CommandContext, file: string): Promise<void> {
  const { client } = context;
  const document = await loadDocument(file, context.documents);
  const named = NamedSchema.safeParse(document.value);
  if (!named.success) throw new UsageError(`${document.label}: the definition has no "name"`);
  const { name, description } = named.data;

  let workerCreated = false;
  let worker = await findWorker(client, (w) => w.name === name);
  if (!worker) {
    try {
      const created = await client.post(
        client.workspacePath('workers'),
        { json: { name, ...(typeof description === 'string' ? { description } : {}) } },
        CreatedSchema,
      );
      worker = { id: created.id, name };
      workerCreated = true;
    } catch (error) {
      // Someone else created it between the lookup and the create: use theirs.
      if (!(error instanceof ApiError && error.status === 409)) throw error;
      worker = await findWorker(client, (w) => w.name === name);
      if (!worker) throw error;
    }
  }

  const version = await client.post(
    client.workspacePath('workers', worker.id, 'versions'),
    { text: document.text, contentType: document.format === 'yaml' ? 'application/yaml' : 'application/json' },
    VersionSchema,
  );
  const digest = version.digest.replace(/^sha256:/, '');
  const unchanged = version.created === false;
  const result: ApplyResult = { workerId: worker.id, name, workerCreated, version: version.version, digest: `sha256:${digest}`, unchanged };
  context.report([`worker ${name} (${worker.id}) version ${version.version} digest sha256:${digest}${unchanged ? ' unchanged' : ''}`], result);
}
