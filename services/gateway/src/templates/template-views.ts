import { parseWorkerDefinition, type WorkerDefinition, type WorkerTemplate } from '@packetagent/contracts';

/** The shipped definition, parsed once: templates are constants. */
const parsed = new Map<string, WorkerDefinition>();

export function templateDefinition(template: WorkerTemplate): WorkerDefinition {
  let definition = parsed.get(template.id);
  if (!definition) {
    definition = parseWorkerDefinition(template.definition, 'yaml');
    parsed.set(template.id, definition);
  }
  return definition;
}

export function templateSummary(template: WorkerTemplate) {
  const definition = templateDefinition(template);
  return {
    id: template.id,
    version: template.version,
    title: template.title,
    category: template.category,
    schedule: template.schedule,
    summary: template.summary,
    tools: [...new Set(definition.tools.map((grant) => grant.tool))],
    credentials: [...new Set(definition.tools.flatMap((grant) => grant.credentials))].sort(),
  };
}
