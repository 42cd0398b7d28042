import { Inject, Injectable } from '@nestjs/common';
import type { PoolClient } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import {
  ATTENTION_DEADLINE_PURPOSE,
  ATTENTION_ESCALATION_PURPOSE,
  ATTENTION_REMINDER_PURPOSE,
  attentionStream,
  durationSeconds,
  computerGrantTool,
  policyStream,
  redactJson,
  redactResource,
  SchedulerCommands,
  signCredentialGrant,
  type AuthorizeRequest,
  type Approval,
  type AuthorizeResult,
  type DecisionReasonCode,
  type PolicyEventData,
} from '@packetagent/contracts';
import { CommandBus } from '@packetagent/bus';
import { ConcurrencyError, PG_POOL, PostgresEventStore } from '@packetagent/eventstore';
import type { Pool } from 'pg';
import { commitAnswer, type AttentionRow } from '../attention/attention.rows';
import { decide as decideAttention } from '../attention/attention.decider';
import { attentionState } from '../attention/attention.rows';
import { attentionTimerId, SYSTEM_ACTOR } from '../attention/usecases/answer-attention';
import { composeComputer, type ComputerCheck, type ComputerLookup } from '../computers/compose-computer';
import { ReadComputer } from '../computers/read-computer';
import type { CompiledGrant, GrantSet } from '../grants/compile-grants';
import { readGrantSet } from '../grants/read-grant-set';
import { checkCall } from '../grants/evaluate-call';
import { POLICY_OPTIONS, type ResolvedPolicyOptions } from '../policy.options';
import { CatchUpRun } from '../runs/catch-up-run';

interface Verdict {
  decision: AuthorizeResult['decision'];
  code: DecisionReasonCode;
  text: string;
  approvalId?: string;
  deploymentId?: string;
  effectiveDigest?: string;
  /** The granted tool's grant, on allow. */
  grant?: CompiledGrant;
  /** An open attention whose deadline timer is not known to be set. */
  needsTimer?: AttentionRow;
  /** On allow of a call on an ssh computer: whose key the answer grants. */
  computerKey?: { computer: string; credential: string };
  /** `approval_edited`: the call a person approved instead of this one. */
  edit?: NonNullable<AuthorizeResult['edit']>;
}

type OnComputer = Extract<ComputerCheck, { ok: true }>;

const GRANT_SET_CACHE_SIZE = 500;
const ATTEMPTS = 8;

/** Denials that mean only that policy has not applied the run's admission or its deployment yet. */
const NOT_YET_KNOWN: ReadonlySet<DecisionReasonCode> = new Set(['unknown_run', 'unknown_deployment', 'grants_unavailable']);

class NotYetKnown extends Error {}

const deny = (code: DecisionReasonCode, text: string, extra: Partial<Verdict> = {}): Verdict => ({ decision: 'deny', code, text, ...extra });

/**
 * Decides one tool call, fail-closed, and records the decision (redacted) on `policy-<runId>`
 * in the same transaction as whatever it changed: a new attention record, a consumed
 * approve-once approval, an expiry noticed at use.
 */
@Injectable()
export class Authorize {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly store: PostgresEventStore,
    private readonly bus: CommandBus,
    @Inject(POLICY_OPTIONS) private readonly options: ResolvedPolicyOptions,
    private readonly catchUp: CatchUpRun,
    private readonly computers: ReadComputer,
  ) {}

  async execute(request: AuthorizeRequest): Promise<AuthorizeResult> {
    // Read before the run's row is locked: no decision of the run waits on another service.
    const computer = request.computer !== undefined && (request.tool === 'run_command' || request.tool === 'mcp') ? await this.computers.lookup(request.workspaceId, request.computer) : null;
    let caughtUp = false;
    for (let attempt = 1; ; attempt++) {
      try {
        const verdict = await this.store.transaction(async (client) => {
          const verdict = await this.decide(client, request, computer);
          // Policy follows runs and deployments from the bus; one it has not applied yet is read from the store, then decided again.
          if (!caughtUp && NOT_YET_KNOWN.has(verdict.code)) throw new NotYetKnown();
          await this.record(client, request, verdict);
          return verdict;
        });
        if (verdict.needsTimer) await this.setDeadlineTimer(verdict.needsTimer);
        return this.answer(request, verdict);
      } catch (error) {
        // Another decision in the same run, or an answer to the same attention, committed first:
        // decide again on what is now there.
        if (error instanceof ConcurrencyError && attempt < ATTEMPTS) continue;
        if (error instanceof NotYetKnown) {
          caughtUp = true;
          await this.catchUp.execute(request.workspaceId, request.runId);
          continue;
        }
        throw error;
      }
    }
  }

  private async decide(client: PoolClient, request: AuthorizeRequest, computer: ComputerLookup | null): Promise<Verdict> {
    // The run's row lock makes concurrent decisions of one run queue: each appends to the
    // run's decision stream, and racing for its next version would only fail and retry.
    const { rows: runs } = await client.query<{ workspace_id: string; deployment_id: string; effective_digest: string }>(
      `SELECT workspace_id, deployment_id, effective_digest FROM policy.runs WHERE run_id = $1 FOR UPDATE`,
      [request.runId],
    );
    const run = runs[0];
    // A run of another workspace is as unknown as a missing one.
    if (!run || run.workspace_id !== request.workspaceId) return deny('unknown_run', 'no admitted run has this id in this workspace');
    const pinned = { deploymentId: run.deployment_id, effectiveDigest: run.effective_digest };
    // The run's owner knows of a migration policy has not applied: grants of another version never decide its calls.
    if (request.effectiveDigest && request.effectiveDigest !== run.effective_digest) {
      return deny('grants_unavailable', `the run is pinned to ${request.effectiveDigest}, policy knows it under ${run.effective_digest}`, pinned);
    }

    const { rows: deployments } = await client.query<{ status: string }>(`SELECT status FROM policy.deployments WHERE deployment_id = $1`, [run.deployment_id]);
    const status = deployments[0]?.status;
    if (!status) return deny('unknown_deployment', 'the run\'s deployment is not known to policy', pinned);
    if (status === 'revoked') return deny('deployment_revoked', 'the run\'s deployment is revoked', pinned);
    if (status === 'paused') return deny('deployment_paused', 'the run\'s deployment is paused', pinned);

    const grants = await this.grantSet(client, run.effective_digest);
    if (!grants) return deny('grants_unavailable', 'no intact compiled grants are bound to the run\'s effective digest', pinned);

    const check = checkCall(request, grants);
    if (!check.ok) return deny(check.code, check.text, pinned);
    const grant = check.grant;
    let onComputer: OnComputer | null = null;
    if (request.computer !== undefined) {
      const composed = composeComputer(computer ?? { ok: false, reason: 'unanswered', text: `computer "${request.computer}" was not read` }, request);
      if (!composed.ok) return deny(composed.code, composed.text, pinned);
      onComputer = composed;
    }
    const verdict = await this.decideApproval(client, request, grant, check.resourceKey, onComputer, run.deployment_id, pinned);
    if (verdict.decision === 'allow' && onComputer?.keyCredential) verdict.computerKey = { computer: onComputer.name, credential: onComputer.keyCredential };
    return verdict;
  }

  /**
   * The approval a granted call needs: the grant's, or a person's for every call on a computer
   * whose policy asks (the stricter wins). Under the computer's `explicit` approval mode nothing
   * but an answer to this very call covers it.
   */
  private async decideApproval(
    client: PoolClient,
    request: AuthorizeRequest,
    grant: CompiledGrant,
    resourceKey: string,
    onComputer: OnComputer | null,
    deploymentId: string,
    pinned: Partial<Verdict>,
  ): Promise<Verdict> {
    const computerAsks = onComputer?.requirement === 'ask';
    const approval: Approval = computerAsks ? 'always' : grant.approval;
    if (approval === 'never') {
      const text = onComputer ? `${grant.tool} is granted without approval on computer "${onComputer.name}"` : `${grant.tool} is granted without approval`;
      return { decision: 'allow', code: 'granted', text, grant, ...pinned };
    }
    const everyCall = computerAsks && onComputer!.approval === 'explicit';

    if (!everyCall) {
      const { rows: runApprovals } = await client.query<{ attention_id: string }>(
        `SELECT attention_id FROM policy.run_approvals WHERE run_id = $1 AND tool = $2 AND verb = $3 AND resource_key = $4`,
        [request.runId, request.tool, request.verb, resourceKey],
      );
      if (runApprovals[0]) {
        return { decision: 'allow', code: 'approved_for_run', text: 'an identical call was approved for this run', approvalId: runApprovals[0].attention_id, grant, ...pinned };
      }
    }

    // An approval with an edit answers both calls: the original (approval_edited, naming the edit) and the edited one.
    const { rows: live } = await client.query<AttentionRow>(
      `SELECT * FROM policy.attention WHERE run_id = $1 AND (call_digest = $2 OR edited_call_digest = $2) AND consumed_at IS NULL
        ORDER BY (call_digest = $2) DESC LIMIT 1 FOR UPDATE`,
      [request.runId, request.callDigest],
    );
    const existing = live[0];
    if (existing?.edit && existing.edited_arguments && existing.call_digest === request.callDigest && existing.state === 'approved') {
      const { edit } = existing;
      return deny('approval_edited', 'the call was approved with edited arguments: the edited call runs instead', {
        approvalId: existing.attention_id,
        edit: { attentionId: existing.attention_id, originalDigest: edit.originalDigest, editedDigest: edit.editedDigest, arguments: existing.edited_arguments, editor: edit.editor },
        ...pinned,
      });
    }
    if (existing) return this.decideWithAttention(client, existing, grant, pinned, everyCall);
    const text = computerAsks
      ? `commands on computer "${onComputer!.name}" need a person's approval (${everyCall ? 'its approval mode is explicit: every call is asked' : 'an approval for the run covers identical calls'})`
      : undefined;
    return this.requestAttention(client, request, { ...grant, approval }, resourceKey, deploymentId, pinned, text);
  }

  /** `everyCall`: an approval covers the one call it answered, whatever its scope. */
  private async decideWithAttention(client: PoolClient, row: AttentionRow, grant: CompiledGrant, pinned: Partial<Verdict>, everyCall = false): Promise<Verdict> {
    const approvalId = row.attention_id;
    switch (row.state) {
      case 'approved':
        if (row.scope === 'once' || everyCall) {
          await client.query(`UPDATE policy.attention SET consumed_at = now() WHERE attention_id = $1`, [approvalId]);
          const text = everyCall ? 'this call was approved; on a computer whose approval mode is explicit an approval covers one call' : 'this call was approved once; the approval is now used';
          return { decision: 'allow', code: 'approved_once', text, approvalId, grant, ...pinned };
        }
        return { decision: 'allow', code: 'approved_for_run', text: 'this call was approved for the run', approvalId, grant, ...pinned };
      case 'open': {
        const events = decideAttention({ kind: 'expire', now: this.options.clock() }, attentionState(row));
        if (events.length > 0) {
          // The deadline passed before the timer was handled: the default outcome applies now.
          await commitAnswer(this.store, client, row, events, SYSTEM_ACTOR);
          return deny('approval_expired', 'the approval deadline passed without an answer', { approvalId, ...pinned });
        }
        return {
          decision: 'approval_required',
          code: 'approval_pending',
          text: 'waiting for an answer to the approval request',
          approvalId,
          needsTimer: row.timer_set ? undefined : row,
          ...pinned,
        };
      }
      case 'rejected':
        return deny('approval_rejected', 'the approval request for this call was rejected', { approvalId, ...pinned });
      case 'expired':
        return deny('approval_expired', 'the approval deadline passed without an answer', { approvalId, ...pinned });
      case 'withdrawn':
        return deny('approval_withdrawn', 'the approval request was withdrawn', { approvalId, ...pinned });
    }
  }

  private async requestAttention(
    client: PoolClient,
    request: AuthorizeRequest,
    grant: CompiledGrant,
    resourceKey: string,
    deploymentId: string,
    pinned: Partial<Verdict>,
    computerText?: string,
  ): Promise<Verdict> {
    const { rows: runRows } = await client.query<{ version_digest: string }>(`SELECT version_digest FROM policy.runs WHERE run_id = $1`, [request.runId]);
    const attentionId = uuidv7();
    const now = this.options.clock();
    const rules = grant.approvalRules;
    const ruleSeconds = (value: string | undefined) => (value === undefined ? null : durationSeconds(value));
    const deadline = new Date(now.getTime() + 1_000 * (ruleSeconds(rules?.deadline) ?? grant.approvalTimeoutSeconds ?? this.options.defaultApprovalTimeoutSeconds));
    // Due at or after the deadline, a reminder or an escalation would only follow the expiry.
    const dueBefore = (seconds: number | null) => (seconds === null || now.getTime() + 1_000 * seconds >= deadline.getTime() ? null : new Date(now.getTime() + 1_000 * seconds));
    const remindAt = dueBefore(ruleSeconds(rules?.remindAfter));
    const escalateAt = dueBefore(ruleSeconds(rules?.escalate?.after));
    const resource = request.resource === null ? null : redactResource(request.resource);
    const args = redactJson(request.arguments);
    const { rows } = await client.query<AttentionRow>(
      `INSERT INTO policy.attention (attention_id, workspace_id, run_id, deployment_id, version_digest, call_digest, tool, verb,
                                     resource, resource_key, approval_mode, arguments, requester, state, deadline, stream_version,
                                     rules, remind_at, escalate_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb, $13::jsonb, 'open', $14, 1, $15::jsonb, $16, $17)
       ON CONFLICT (run_id, call_digest) WHERE consumed_at IS NULL DO NOTHING
       RETURNING *`,
      [
        attentionId, request.workspaceId, request.runId, deploymentId, runRows[0]!.version_digest, request.callDigest, request.tool,
        request.verb, resource, resourceKey, grant.approval, JSON.stringify(args), JSON.stringify(request.requester), deadline,
        rules ? JSON.stringify(rules) : null, remindAt, escalateAt,
      ],
    );
    // A concurrent identical call created it first: decide again and find it.
    if (!rows[0]) throw new ConcurrencyError(`attention-${request.runId}`, 'no_stream', 1);
    const data: PolicyEventData<'attention.requested'> = {
      attentionId,
      runId: request.runId,
      deploymentId,
      versionDigest: runRows[0]!.version_digest,
      tool: request.tool,
      verb: request.verb,
      resource,
      arguments: args,
      requester: request.requester,
      deadline: deadline.toISOString(),
      ...(rules ? { rules } : {}),
      ...(remindAt ? { remindAt: remindAt.toISOString() } : {}),
      ...(escalateAt ? { escalateAt: escalateAt.toISOString() } : {}),
    };
    await this.store.append(attentionStream(attentionId), 'no_stream', [{ type: 'attention.requested', data, actor: request.requester }], {
      workspaceId: request.workspaceId,
      client,
    });
    const firstUse = grant.approval === 'first_use';
    return {
      decision: 'approval_required',
      code: firstUse ? 'first_use' : 'approval_required',
      text: computerText ?? (firstUse ? `the first ${grant.tool} call of this kind in the run needs approval` : `${grant.tool} calls need approval`),
      approvalId: attentionId,
      needsTimer: rows[0],
      ...pinned,
    };
  }

  /**
   * Compiled grants are immutable per effective digest, so a set read and verified once is kept
   * (the most recently used few hundred): a call costs no read and no re-hash of its grants.
   */
  private readonly verifiedGrantSets = new Map<string, GrantSet>();

  private async grantSet(client: PoolClient, effectiveDigest: string): Promise<GrantSet | null> {
    const cached = this.verifiedGrantSets.get(effectiveDigest);
    if (cached) {
      this.verifiedGrantSets.delete(effectiveDigest);
      this.verifiedGrantSets.set(effectiveDigest, cached);
      return cached;
    }
    const verified = await readGrantSet(client, effectiveDigest);
    if (verified === null) return null;
    // Grants that no longer match the digest they were compiled with are not used.
    if (verified === 'damaged') {
      this.options.log('error', 'compiled grants do not match their digest', { effectiveDigest });
      return null;
    }
    this.verifiedGrantSets.set(effectiveDigest, verified);
    if (this.verifiedGrantSets.size > GRANT_SET_CACHE_SIZE) this.verifiedGrantSets.delete(this.verifiedGrantSets.keys().next().value!);
    return verified;
  }

  private async record(client: PoolClient, request: AuthorizeRequest, verdict: Verdict): Promise<void> {
    const data: PolicyEventData<'policy.decided'> = {
      runId: request.runId,
      tool: request.tool,
      verb: request.verb,
      resource: request.resource === null ? null : redactResource(request.resource),
      callDigest: request.callDigest,
      decision: verdict.decision,
      reason: { code: verdict.code, text: verdict.text },
      ...(verdict.approvalId ? { approvalId: verdict.approvalId } : {}),
      ...(verdict.deploymentId ? { deploymentId: verdict.deploymentId } : {}),
      ...(verdict.effectiveDigest ? { effectiveDigest: verdict.effectiveDigest } : {}),
      ...(request.computer !== undefined ? { computer: request.computer } : {}),
    };
    const stream = policyStream(request.runId);
    // A call naming another workspace's run is still recorded, on the stream's own workspace.
    const { rows } = await client.query<{ workspace_id: string }>(
      `SELECT workspace_id FROM streams WHERE stream_id = $1
       UNION ALL SELECT workspace_id FROM policy.runs WHERE run_id = $2 LIMIT 1`,
      [stream, request.runId],
    );
    const workspaceId = rows[0]?.workspace_id ?? request.workspaceId;
    await this.store.append(stream, 'any', [{ type: 'policy.decided', data, actor: SYSTEM_ACTOR }], { workspaceId, client });
  }

  private answer(request: AuthorizeRequest, verdict: Verdict): AuthorizeResult {
    const result: AuthorizeResult = { decision: verdict.decision, reason: { code: verdict.code, text: verdict.text } };
    if (verdict.approvalId) result.approvalId = verdict.approvalId;
    if (verdict.edit) result.edit = verdict.edit;
    const expiresAt = new Date(this.options.clock().getTime() + 1_000 * this.options.credentialGrantTtlSeconds).toISOString();
    if (verdict.decision === 'allow' && verdict.computerKey) {
      const { computer, credential } = verdict.computerKey;
      result.computerGrant = signCredentialGrant(
        { grantId: uuidv7(), workspaceId: request.workspaceId, runId: request.runId, tool: computerGrantTool(computer), credential, expiresAt },
        this.options.signingKey,
      );
    }
    if (verdict.decision === 'allow' && request.credentials.length > 0) {
      result.credentialGrants = [...new Set(request.credentials)].sort().map((credential) => ({
        credential,
        token: signCredentialGrant(
          { grantId: uuidv7(), workspaceId: request.workspaceId, runId: request.runId, tool: request.tool, credential, expiresAt },
          this.options.signingKey,
        ),
      }));
    }
    return result;
  }

  /**
   * The attention's timers: its deadline, and its reminder and escalation when its rules set
   * them. Until the scheduler holds them, the deadline is still enforced at use (see
   * decideWithAttention); a reminder or escalation is only as late as the next identical call.
   */
  async setDeadlineTimer(row: AttentionRow): Promise<void> {
    const timers = [
      { purpose: ATTENTION_DEADLINE_PURPOSE, dueAt: row.deadline },
      { purpose: ATTENTION_REMINDER_PURPOSE, dueAt: row.remind_at },
      { purpose: ATTENTION_ESCALATION_PURPOSE, dueAt: row.escalate_at },
    ] as const;
    try {
      for (const { purpose, dueAt } of timers) {
        if (dueAt === null) continue;
        await this.bus.request(
          SchedulerCommands.setTimer,
          {
            workspaceId: row.workspace_id,
            timerId: attentionTimerId(purpose, row.attention_id),
            purpose,
            dueAt: dueAt.toISOString(),
            payload: { attentionId: row.attention_id },
            actor: SYSTEM_ACTOR,
          },
          { timeoutMs: this.options.timerRequestTimeoutMs },
        );
      }
      await this.pool.query(`UPDATE policy.attention SET timer_set = true WHERE attention_id = $1`, [row.attention_id]);
    } catch (error) {
      this.options.log('warn', 'could not set an attention timer; it is retried on the next identical call', {
        attentionId: row.attention_id,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
}
