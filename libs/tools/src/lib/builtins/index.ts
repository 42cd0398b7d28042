import type { ToolName } from '@packetagent/contracts';
import type { BuiltinTool } from '../internal/builtin';
import { askOwnerTool } from './ask-owner/ask-owner.tool';
import { browserTool } from './browser/browser.tool';
import { emailSendTool } from './email-send/email-send.tool';
import { filesTool } from './files/files.tool';
import { finishTool } from './finish/finish.tool';
import { gitTool } from './git/git.tool';
import { githubApiTool } from './github-api/github-api.tool';
import { httpFetchTool } from './http-fetch/http-fetch.tool';
import { mcpTool } from './mcp/mcp.tool';
import { proposeCriteriaTool } from './propose-criteria/propose-criteria.tool';
import { runCommandTool } from './run-command/run-command.tool';
import { slackPostTool } from './slack-post/slack-post.tool';
import { updateCriteriaTool } from './update-criteria/update-criteria.tool';

/** Every known tool's built-in; the Record type makes a tool added to KNOWN_TOOLS fail to compile here until it has one. */
export const BUILTIN_TOOLS: { readonly [Name in ToolName]: BuiltinTool<unknown> } = {
  http_fetch: httpFetchTool,
  github_api: githubApiTool,
  browser: browserTool,
  run_command: runCommandTool,
  files: filesTool,
  git: gitTool,
  slack_post: slackPostTool,
  email_send: emailSendTool,
  mcp: mcpTool,
  finish: finishTool,
  ask_owner: askOwnerTool,
  propose_criteria: proposeCriteriaTool,
  update_criteria: updateCriteriaTool,
};
