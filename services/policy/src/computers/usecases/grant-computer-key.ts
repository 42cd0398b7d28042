import { Inject, Injectable } from '@nestjs/common';
import type { z } from 'zod';
import { v7 as uuidv7 } from 'uuid';
import {
  commandRequirement,
  COMPUTER_PROBE_RUN_ID,
  ComputerPolicySchema,
  computerGrantTool,
  CredentialNameSchema,
  policyKeysStream,
  signCredentialGrant,
  type PolicyCommands,
  type PolicyEventData,
} from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import { SYSTEM_ACTOR } from '../../attention/usecases/answer-attention';
import { POLICY_OPTIONS, type ResolvedPolicyOptions } from '../../policy.options';
import { ComputerListingRefusedError, ComputerNotFoundError, ComputerUnavailableError, ComputerWithoutKeyError } from '../../shared/errors';
import { ReadComputer } from '../read-computer';

export type GrantComputerKeyRequest = z.output<(typeof PolicyCommands)['computerKeyGrant']['request']>;

/**
 * A single-use grant for a registered computer's key outside any run (the sandbox's probes). The
 * credential is the one the computer's record names, read from the registry's owner: a caller
 * cannot name another. Each grant is recorded before its token is handed out.
 */
@Injectable()
export class GrantComputerKey {
  constructor(
    private readonly store: PostgresEventStore,
    private readonly computers: ReadComputer,
    @Inject(POLICY_OPTIONS) private readonly options: ResolvedPolicyOptions,
  ) {}

  async execute(request: GrantComputerKeyRequest): Promise<{ credential: string; token: string }> {
    const lookup = await this.computers.lookup(request.workspaceId, request.computer);
    if (!lookup.ok) throw lookup.reason === 'not_found' ? new ComputerNotFoundError(request.computer) : new ComputerUnavailableError(lookup.text);
    const { view } = lookup;
    if (view.kind !== 'ssh') throw new ComputerWithoutKeyError(request.computer);
    const key = CredentialNameSchema.safeParse(view.ssh?.keyCredential);
    if (!key.success) throw new ComputerUnavailableError(`the record of computer "${request.computer}" names no usable key`);
    if (request.purpose === 'mcp_list') {
      // Read with the conservative defaults: a value this build does not know never trusts more.
      const requirement = commandRequirement(ComputerPolicySchema.parse(view.policy));
      if (requirement !== 'allow') throw new ComputerListingRefusedError(request.computer, requirement);
    }

    const grantId = uuidv7();
    const data: PolicyEventData<'policy.computer_key_granted'> = { computer: request.computer, credential: key.data, purpose: request.purpose, grantId };
    await this.store.append(policyKeysStream(request.workspaceId), 'any', [{ type: 'policy.computer_key_granted', data, actor: SYSTEM_ACTOR }], { workspaceId: request.workspaceId });
    const expiresAt = new Date(this.options.clock().getTime() + 1_000 * this.options.credentialGrantTtlSeconds).toISOString();
    const token = signCredentialGrant(
      { grantId, workspaceId: request.workspaceId, runId: COMPUTER_PROBE_RUN_ID, tool: computerGrantTool(request.computer), credential: key.data, expiresAt },
      this.options.signingKey,
    );
    return { credential: key.data, token };
  }
}
