import { isMap, isSeq, parseDocument, type Document } from 'yaml';
import { ValidationError } from '../errors';
import { parseWorkerDefinition } from '../worker-definition/parse';
import type { WorkerDefinition } from '../worker-definition/schema';
import { templateScriptName } from './template-catalog';
import type { WorkerTemplate } from './worker-template';

/** The fields an instantiation may replace; the rest (apiVersion, kind, name) are the template's or the request's. */
export const TEMPLATE_OVERRIDABLE_FIELDS = ['description', 'model', 'instructions', 'input', 'output', 'tools', 'budgets', 'bounds', 'exit', 'triggers', 'notifications', 'mcp'] as const;
export type TemplateOverridableField = (typeof TEMPLATE_OVERRIDABLE_FIELDS)[number];
export type TemplateOverrides = Partial<Record<TemplateOverridableField, unknown>>;

export interface TemplateInstance {
  /** The definition as it will be stored: the template's YAML, comments kept, with the changes applied. */
  source: string;
  definition: WorkerDefinition;
}

const DEMO_NOTE =
  ' Demo: the model is the scripted provider replaying this template\'s script, and only the grants that need no credential are kept. Point model at a provider and restore the tools to run it for real.';

/**
 * A template made into a definition named `name`: each key of `overrides` replaces that field of
 * the template whole. With `demo`, the model becomes the template's scripted demo, only the
 * grants the demo needs are kept, and it starts by hand only; the document says so at its top.
 * Throws ValidationError (paths of the definition) when the result is not a valid definition.
 */
export function instantiateTemplate(template: WorkerTemplate, request: { name: string; overrides?: TemplateOverrides; demo?: boolean }): TemplateInstance {
  const document = parseDocument(template.definition);
  const unknown = Object.keys(request.overrides ?? {}).filter((key) => !(TEMPLATE_OVERRIDABLE_FIELDS as readonly string[]).includes(key));
  if (unknown.length > 0) {
    throw new ValidationError(
      'invalid overrides',
      unknown.slice(0, 20).map((key) => ({ path: `overrides.${key}`, message: `not a field an instantiation may replace (one of ${TEMPLATE_OVERRIDABLE_FIELDS.join(', ')})` })),
    );
  }
  document.set('name', request.name);
  for (const [key, value] of Object.entries(request.overrides ?? {})) document.set(key, document.createNode(value));
  if (request.demo) asDemo(document, template);
  const source = document.toString({ lineWidth: 0 });
  return { source, definition: parseWorkerDefinition(source, 'yaml') };
}

function asDemo(document: Document, template: WorkerTemplate): void {
  document.set('model', document.createNode({ provider: 'scripted', model: templateScriptName(template), maxOutputTokens: 1024 }, { flow: true }));
  const tools = document.get('tools');
  if (isSeq(tools)) {
    const kept = new Set<string>(template.demo.tools);
    tools.items = tools.items.filter((item) => isMap(item) && kept.has(String(item.get('tool'))));
  }
  document.set('triggers', document.createNode([{ manual: {} }], { flow: true }));
  document.delete('notifications');
  document.commentBefore = [DEMO_NOTE, document.commentBefore].filter(Boolean).join('\n');
}
