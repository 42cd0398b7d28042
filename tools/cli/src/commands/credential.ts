import { z } from 'zod';
import type { CommandContext } from '../context';
import { UsageError } from '../errors';

const CredentialSchema = z.looseObject({
  name: z.string().min(1),
  version: z.number(),
  keyId: z.string().optional(),
  createdBy: z.looseObject({ kind: z.string(), id: z.string() }).optional(),
  createdAt: z.string().optional(),
});
type CredentialRecord = z.infer<typeof CredentialSchema>;

const CredentialListSchema = z.looseObject({ items: z.array(CredentialSchema) });

function credentialLine(item: CredentialRecord): string {
  return [
    item.name,
    `version ${item.version}`,
    item.keyId ? `key ${item.keyId}` : '',
    item.createdAt ? `set ${item.createdAt}` : '',
    item.createdBy ? `by ${item.createdBy.kind}:${item.createdBy.id}` : '',
  ]
    .filter(Boolean)
    .join('  ');
}

/**
 * `packetagent credential set NAME`: the value comes only from standard input, so it stays out of
 * shell history and process lists. One trailing newline goes: `echo` and here-documents add it.
 */
export async function setCredential(context: CommandContext, name: string): Promise<void> {
  const { client } = context;
  const value = (await context.documents.readStdin()).replace(/\r?\n$/, '');
  if (!value) throw new UsageError('the credential value is empty: pipe it on standard input, e.g. `packetagent credential set NAME < file`');
  const stored = await client.put(client.workspacePath('credentials', name), { json: { value } }, CredentialSchema);
  context.report([`credential ${credentialLine(stored)}`], stored);
}

/** `packetagent credential list`: names and versions; the API never returns values. */
export async function listCredentials(context: CommandContext): Promise<void> {
  const { client } = context;
  const answer = await client.get(client.workspacePath('credentials'), CredentialListSchema);
  context.report(answer.items.length ? answer.items.map(credentialLine) : ['no credentials'], answer);
}

export async function deleteCredential(context: CommandContext, name: string): Promise<void> {
  const { client } = context;
  await client.delete(client.workspacePath('credentials', name));
  context.report([`credential ${name} deleted`], { name, deleted: true });
}
