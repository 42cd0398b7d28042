export { PolicyModule } from './policy.module';
export { resolvePolicyOptions, POLICY_OPTIONS, type PolicyModuleOptions, type ResolvedPolicyOptions, type PolicyLog } from './policy.options';
export { compileGrants, grantsDigest, type CompiledGrant, type GrantSet } from './grants/compile-grants';
export { checkCall, type Call, type CallCheck } from './grants/evaluate-call';
export { AttentionAlreadyAnsweredError, AttentionNotFoundError } from './shared/errors';
