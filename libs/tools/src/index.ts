export { ToolRegistry, type ToolRegistryOptions } from './lib/registry';
export { DEFAULT_TOOLS_CONFIG, ToolsConfigSchema, toolsConfig } from './lib/config';
export { ToolAbortedError, ToolArgumentsError, ToolNotAuthorizedError } from './lib/errors';
export { forbiddenAddressReason } from './lib/net/address-policy';
export { runBranch } from './lib/builtins/git/git.tool';
export type {
  CallAuthorization,
  HostResolver,
  OperationDescriptor,
  PlannedCall,
  ResolvedAddress,
  ToolContext,
  ToolOutcome,
  ToolSpec,
  ToolsConfig,
} from './lib/tool.types';
