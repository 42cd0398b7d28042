import type { ToolName } from '../worker-definition/known-tools';

/** Words that ask for what each tool does. Control tools (finish, ask_owner, criteria) are always the worker's. */
const TOOL_WORDS: Record<Exclude<ToolName, 'finish' | 'ask_owner' | 'propose_criteria' | 'update_criteria'>, RegExp> = {
  http_fetch: /\b(https?:\/\/\S+|urls?|fetch\w*|download\w*|web ?sites?|web ?pages?|pages?|apis?|endpoints?|http|links?|feeds?|rss|status pages?|mailbox|inbox)\b/i,
  github_api: /\b(github|pull requests?|prs?|issues?|repos?|repositor(?:y|ies)|check runs?)\b/i,
  browser: /\b(browser|browse|click\w*|screenshots?|log ?in to|sign ?in to|fill (?:in|out))\b/i,
  run_command: /\b(commands?|shell|scripts?|terminal|bash|execute|npm|make|pytest|tests? suite)\b/i,
  files: /\b(files?|write|writes|save|saves|reports?|notes?|documents?|markdown|drafts?|summar\w*|csv|briefs?|logs?)\b/i,
  git: /\b(git|clone|commits?|branch(?:es)?|push|diffs?)\b/i,
  slack_post: /\b(slack|#[a-z0-9][a-z0-9_-]*)\b/i,
  email_send: /\b(e-?mails?|mail(?:s|ed)?|[a-z0-9._-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)+)\b/i,
  mcp: /\bmcp\b/i,
};

const CONTROL_TOOLS: readonly string[] = ['finish', 'ask_owner', 'propose_criteria', 'update_criteria'];

/** Whether a description of a worker asks for what `tool` does. */
export function promptAsksFor(prompt: string, tool: string): boolean {
  if (CONTROL_TOOLS.includes(tool)) return true;
  const words = TOOL_WORDS[tool as keyof typeof TOOL_WORDS];
  return words !== undefined && words.test(prompt);
}

export interface RemovedGrant {
  tool: string;
  reason: string;
}

/**
 * A drafted definition (a JSON value, valid or not) without the grants of tools the prompt did
 * not ask for: a draft never grants more than was asked. Anything not a list of grants is left
 * for the validator to judge.
 */
export function withoutUnaskedGrants(value: unknown, prompt: string): { value: unknown; removed: RemovedGrant[] } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { value, removed: [] };
  const definition = value as Record<string, unknown>;
  const tools = definition['tools'];
  if (!Array.isArray(tools)) return { value, removed: [] };
  const removed: RemovedGrant[] = [];
  const kept = tools.filter((grant: unknown) => {
    const tool = typeof grant === 'object' && grant !== null ? (grant as Record<string, unknown>)['tool'] : undefined;
    if (typeof tool !== 'string' || promptAsksFor(prompt, tool)) return true;
    removed.push({ tool, reason: `the request does not ask for what ${tool} does` });
    return false;
  });
  return { value: { ...definition, tools: kept }, removed };
}
