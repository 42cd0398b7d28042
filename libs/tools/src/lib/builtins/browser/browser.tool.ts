import { KNOWN_TOOLS, type BrowserActResult, type JsonObject } from '@packetagent/contracts';
import { z } from 'zod';
import { failure, type BuiltinTool } from '../../internal/builtin';
import { canonicalUrl, checkHttpUrl } from '../../internal/http-shared';
import { toParameters } from '../../internal/schema';
import { redactBulk } from '../../internal/text';
import { sandboxFailure } from '../sandbox-failure';

const ACTIONS = KNOWN_TOOLS.browser.verbs;
const MUTATING: readonly string[] = KNOWN_TOOLS.browser.mutatingVerbs;

const ArgsSchema = z
  .strictObject({
    action: z.enum(ACTIONS).describe('navigate to the URL, read the page, click or type into an element, or take a screenshot.'),
    url: z
      .string()
      .max(4096)
      .superRefine((url, ctx) => checkHttpUrl('browser', url, ctx))
      .describe('The page the action is on (for navigate: the page to open).'),
    selector: z.string().min(1).max(1000).optional().describe('click and type: CSS selector of the element.'),
    text: z.string().max(10_000).optional().describe('type: the text to type.'),
  })
  .superRefine((args, ctx) => {
    if ((args.action === 'click' || args.action === 'type') && args.selector === undefined) ctx.addIssue({ code: 'custom', path: ['selector'], message: `required for action "${args.action}"` });
    if (args.action === 'type' && args.text === undefined) ctx.addIssue({ code: 'custom', path: ['text'], message: 'required for action "type"' });
  });

export type BrowserArgs = z.output<typeof ArgsSchema>;

export const browserTool: BuiltinTool<BrowserArgs> = {
  descriptor: {
    tool: 'browser',
    description: 'Drives a browser page in the run\'s sandbox: navigate, read, click, type, screenshot.',
    parameters: toParameters(ArgsSchema),
    argsSchema: ArgsSchema,
    verb: (args) => args.action,
    resource: (args) => canonicalUrl(args.url),
    mutating: (args) => MUTATING.includes(args.action),
    idempotentByKey: (args) => !MUTATING.includes(args.action),
    credentials: () => [],
    redact(args) {
      const redacted: JsonObject = { action: args.action, url: canonicalUrl(args.url) };
      if (args.selector !== undefined) redacted['selector'] = args.selector;
      if (args.text !== undefined) redacted['text'] = redactBulk(args.text);
      return redacted;
    },
  },

  async execute(args, ctx, env) {
    if (!env.sandbox) return failure('sandbox_unavailable', 'no sandbox service is configured: the browser never runs in the caller');
    let result: BrowserActResult;
    try {
      result = await env.sandbox.browse(
        {
          workspaceId: ctx.workspaceId,
          runId: ctx.runId,
          action: args.action,
          url: args.url,
          ...(args.selector !== undefined ? { selector: args.selector } : {}),
          ...(args.text !== undefined ? { text: args.text } : {}),
          allowedUrls: [...(ctx.browserUrls ?? [])],
        },
        ctx.signal,
      );
    } catch (error) {
      if (ctx.signal.aborted) throw error;
      return sandboxFailure(error);
    }
    const output: JsonObject = { url: result.url, title: result.title, status: result.status };
    if (result.text !== null) output['text'] = result.text;
    if (result.screenshot) output['screenshot'] = { ...result.screenshot, sha256: result.screenshotSha256 };
    if (result.blocked.length) output['blocked'] = result.blocked;
    if (!result.ok) {
      const error = result.error ?? { code: 'browser_failed', message: 'the browser action failed' };
      return { ok: false, output: { ...output, error }, summary: `${error.code}: ${error.message}`, error };
    }
    const blocked = result.blocked.length ? `, ${result.blocked.length} request(s) blocked` : '';
    return { ok: true, output, summary: `${args.action} ${result.url}${result.status !== null ? ` (${result.status})` : ''}${blocked}` };
  },
};
