import { parseDocument, isMap, isSeq } from 'yaml';
import { WORKER_NAME_PATTERN } from '../worker-definition/schema';
import { promptAsksFor, type RemovedGrant } from './asked-tools';
import { cronFromWords, onDemandOnly } from './schedule-words';
import { WORKER_TEMPLATES } from './template-catalog';
import type { WorkerTemplate } from './worker-template';

/** How every draft made without a model is labelled, wherever it is shown. */
export const DRAFTED_WITHOUT_A_MODEL = 'drafted without a model';

export interface WordsDraft {
  /** The definition drafted (packetagent/v1 YAML), for review. */
  source: string;
  /** The template it starts from. */
  template: Pick<WorkerTemplate, 'id' | 'title'>;
  removedGrants: RemovedGrant[];
  /** What a person should look at before saving it. */
  notes: string[];
}

const STOP_WORDS = new Set(['a', 'an', 'the', 'and', 'or', 'to', 'of', 'in', 'on', 'for', 'with', 'from', 'that', 'this', 'it', 'me', 'my', 'our', 'us', 'we', 'i', 'at', 'by', 'be', 'is', 'are', 'every', 'each', 'worker', 'agent', 'please', 'which', 'who', 'then', 'into', 'when', 'all', 'any']);

function words(prompt: string): string[] {
  return prompt.toLowerCase().match(/[a-z][a-z0-9]+/g) ?? [];
}

/** The template whose words the description uses most; ties go to the gallery's order. */
function closestTemplate(prompt: string): { template: WorkerTemplate; hits: number } {
  const used = new Set(words(prompt));
  let best = { template: WORKER_TEMPLATES[0]!, hits: -1 };
  for (const template of WORKER_TEMPLATES) {
    const hits = template.keywords.filter((keyword) => used.has(keyword)).length;
    if (hits > best.hits) best = { template, hits };
  }
  return best;
}

/** A worker name made of the description's first telling words. */
function nameFrom(prompt: string, fallback: string): string {
  const telling = words(prompt).filter((word) => !STOP_WORDS.has(word) && !/^\d/.test(word)).slice(0, 4);
  let name = telling.join('-').slice(0, 40).replace(/-+$/, '');
  if (!/^[a-z]/.test(name)) name = '';
  return WORKER_NAME_PATTERN.test(name) ? name : fallback;
}

function firstSentence(prompt: string): string {
  const sentence = prompt.trim().split(/(?<=[.!?])\s/)[0] ?? prompt;
  return sentence.length > 200 ? `${sentence.slice(0, 197)}...` : sentence;
}

/**
 * A definition drafted from a description without any model: the closest shipped template,
 * renamed, its instructions followed by the request, its schedule taken from the words when
 * they name one, and only the grants whose tools the request asks for. Deterministic: the same
 * words always draft the same definition. The result is labelled "drafted without a model".
 */
export function draftFromWords(prompt: string): WordsDraft {
  const { template, hits } = closestTemplate(prompt);
  const document = parseDocument(template.definition);
  const name = nameFrom(prompt, `${template.id}-draft`.slice(0, 63));
  const request = prompt.trim().replace(/\s+/g, ' ');
  const notes: string[] = [];
  if (hits === 0) notes.push(`nothing in the request matches a template closely: it starts from "${template.title}"; rewrite the instructions`);

  document.set('name', name);
  document.set('description', firstSentence(request));
  const instructions = String(document.get('instructions') ?? '').trimEnd();
  document.set('instructions', `${instructions}\n\nWhat was asked: ${request}\n`);

  const removedGrants: RemovedGrant[] = [];
  const tools = document.get('tools');
  if (isSeq(tools)) {
    tools.items = tools.items.filter((item) => {
      const tool = isMap(item) ? String(item.get('tool')) : '';
      if (promptAsksFor(request, tool)) return true;
      removedGrants.push({ tool, reason: `the request does not ask for what ${tool} does` });
      return false;
    });
    if (tools.items.length > 0) notes.push("the grants' resources and credentials are the template's: point them at your own hosts, channels and addresses");
  }

  const cron = cronFromWords(request);
  if (onDemandOnly(request)) {
    document.set('triggers', document.createNode([{ manual: {} }], { flow: true }));
  } else if (cron) {
    document.set('triggers', document.createNode([{ name: 'schedule', cron, timezone: 'UTC', missed: 'skip' }, { manual: {} }]));
    notes.push(`scheduled "${cron}" in UTC from the request's words: check the time zone`);
  }
  document.commentBefore = ` Drafted without a model from the "${template.title}" template and the words of the request.\n Review every field before saving.`;
  return { source: document.toString({ lineWidth: 0 }), template: { id: template.id, title: template.title }, removedGrants, notes };
}
