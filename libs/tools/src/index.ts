export { ToolRegistry, type ToolRegistryOptions } from './lib/registry';
export { McpCatalogue, mcpFunctionName, type CatalogueEntry, type CatalogueServer } from './lib/mcp/mcp-catalogue';
export { DEFAULT_TOOLS_CONFIG, ToolsConfigSchema, toolsConfig } from './lib/config';
export { ToolAbortedError, ToolArgumentsError, ToolNotAuthorizedError } from './lib/errors';
export { forbiddenAddressReason } from './lib/net/address-policy';
export { checkedStream, type CheckedStreamResponse } from './lib/net/checked-stream';
export { checkedFetchLike, fetchRequestBody, fetchRequestHeaders, fetchResponseHeaders, NULL_BODY_STATUSES, type CheckedFetchLikeOptions } from './lib/net/checked-fetch-like';
export { CHECKED_FETCH_METHODS, checkedFetch, CheckedFetchError, type CheckedFetchErrorCode, type CheckedFetchMethod, type CheckedFetchRequest, type CheckedFetchResponse } from './lib/net/checked-fetch';
export { runBranch } from './lib/builtins/git/git.tool';
export type {
  AbandonContext,
  CallAuthorization,
  HostResolver,
  OperationDescriptor,
  PlannedCall,
  ResolvedAddress,
  SandboxPort,
  McpCallRequest,
  McpPort,
  ToolContext,
  ToolOutcome,
  ToolSpec,
  ToolsConfig,
} from './lib/tool.types';
export { sendSmtpMail, type SmtpMessage, type SmtpSendRequest, type SmtpSent } from './lib/mail/send-smtp-mail';
export { parseSmtpConfig, SmtpConfigSchema, type SmtpConfig } from './lib/mail/smtp-config';
export { SmtpError, type SmtpErrorCode } from './lib/mail/smtp-error';
