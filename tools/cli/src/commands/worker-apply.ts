import { z } from 'zod';
import type { CommandContext } from '../context';
import { UsageError } from '../errors';
import { loadDocument } from '../documents';

/** Only what the CLI needs before sending the file; the server validates the whole definition. */
const NamedSchema = z.looseObject({ name: z.string().min(1) });
const AppliedSchema = z.looseObject({
  workerId: z.string().min(1),
  workerCreated: z.boolean(),
  version: z.number().int().positive(),
  digest: z.string().min(1),
  /** false when the definition equals the latest version, which the server then keeps. */
  created: z.boolean(),
});

export interface ApplyResult {
  workerId: string;
  name: string;
  workerCreated: boolean;
  version: number;
  digest: string;
  unchanged: boolean;
}

/**
 * `packetagent worker apply -f FILE`: the worker by name (created when absent) and the file as its
 * next version, in one request: the server checks the definition first, so a refused one creates
 * no worker.
 */
export async function applyWorker(context: CommandContext, file: string): Promise<void> {
  const { client } = context;
  const document = await loadDocument(file, context.documents);
  const named = NamedSchema.safeParse(document.value);
  if (!named.success) throw new UsageError(`${document.label}: the definition has no "name"`);
  const { name } = named.data;

  const applied = await client.post(
    client.workspacePath('workers', 'apply'),
    { text: document.text, contentType: document.format === 'yaml' ? 'application/yaml' : 'application/json' },
    AppliedSchema,
  );
  const digest = applied.digest.replace(/^sha256:/, '');
  const unchanged = !applied.created;
  const result: ApplyResult = { workerId: applied.workerId, name, workerCreated: applied.workerCreated, version: applied.version, digest: `sha256:${digest}`, unchanged };
  context.report([`worker ${name} (${applied.workerId}) version ${applied.version} digest sha256:${digest}${unchanged ? ' unchanged' : ''}`], result);
}
