import { stringify } from 'yaml';

/** Top-level keys of a worker definition in the order the examples and the starter write them. */
const DOCUMENT_ORDER = ['apiVersion', 'kind', 'name', 'description', 'model', 'instructions', 'tools', 'mcpServers', 'computers', 'notifications', 'budgets', 'bounds', 'approvals', 'exit', 'triggers'];
/** Keys of a tool grant, likewise. */
const GRANT_ORDER = ['tool', 'server', 'verbs', 'resources', 'approval', 'credentials'];

function ordered(value: Record<string, unknown>, order: readonly string[]): Record<string, unknown> {
  const known = order.filter((key) => key in value);
  const rest = Object.keys(value).filter((key) => !order.includes(key));
  return Object.fromEntries([...known, ...rest].map((key) => [key, value[key]]));
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The text the editor shows for a saved version: the document as it was written when the server
 * keeps it (`source.text`), otherwise the definition as YAML with its keys in the order a
 * definition is written (the stored form sorts them), never as canonical JSON.
 */
export function definitionText(version: { definition: unknown; source?: { format?: unknown; text?: unknown } | null }): string {
  const written = version.source?.text;
  if (typeof written === 'string' && written.trim()) return written;
  const definition = version.definition;
  if (!isRecord(definition)) return stringify(definition ?? {});
  const document = ordered(definition, DOCUMENT_ORDER);
  if (Array.isArray(document['tools'])) document['tools'] = document['tools'].map((grant) => (isRecord(grant) ? ordered(grant, GRANT_ORDER) : grant));
  return stringify(document, { lineWidth: 0 });
}
