import { BLOCKER_WATCHER } from './blocker-watcher.template';
import { DAILY_WORKSPACE_BRIEF } from './daily-workspace-brief.template';
import { RELEASE_AUDIT } from './release-audit.template';
import { RESEARCH_SUMMARIZER } from './research-summarizer.template';
import { SUPPORT_INBOX_TRIAGE } from './support-inbox-triage.template';
import { WEEKLY_RELEASE_NOTES } from './weekly-release-notes.template';
import { TEMPLATE_SCRIPT_PREFIX, type WorkerTemplate } from './worker-template';

/** The starters shipped with the product, in the order the gallery shows them. */
export const WORKER_TEMPLATES: readonly WorkerTemplate[] = [SUPPORT_INBOX_TRIAGE, DAILY_WORKSPACE_BRIEF, RELEASE_AUDIT, BLOCKER_WATCHER, WEEKLY_RELEASE_NOTES, RESEARCH_SUMMARIZER];

export function findTemplate(id: string): WorkerTemplate | undefined {
  return WORKER_TEMPLATES.find((template) => template.id === id);
}

/** The scripted provider's model name of a template's demo. */
export function templateScriptName(template: Pick<WorkerTemplate, 'id'>): string {
  return `${TEMPLATE_SCRIPT_PREFIX}${template.id}`;
}

/** The demo script a scripted model name stands for, when it names a template's. */
export function templateScript(model: string): WorkerTemplate['demo']['script'] | undefined {
  if (!model.startsWith(TEMPLATE_SCRIPT_PREFIX)) return undefined;
  return findTemplate(model.slice(TEMPLATE_SCRIPT_PREFIX.length))?.demo.script;
}
