import { Injectable } from '@nestjs/common';
import type { PoolClient } from 'pg';
import { isKnownTool, KNOWN_TOOLS, MCP_TOOL, type ActorRef, type JsonObject } from '@packetagent/contracts';
import { ToolArgumentsError, ToolRegistry, type PlannedCall } from '@packetagent/tools';
import { checkCall } from '../../grants/evaluate-call';
import { readGrantSet } from '../../grants/read-grant-set';
import { EditInvalidError, EditNotGrantedError, EditNotSupportedError } from '../../shared/errors';
import type { ApprovedEdit, AttentionRow } from '../attention.rows';

/**
 * An approver's edit of a call, checked as the run would make it: the tool plans the edited
 * arguments (its argument schema, its verb, resource and credentials, its digest), and the run's
 * compiled grants must cover the result exactly as `authorize` checks a call. Built-in tools
 * only: an MCP tool's schema is in the run's pinned catalogue, which policy does not load, and a
 * call on a registered computer would also need the computer's policy composed again.
 */
@Injectable()
export class CheckEdit {
  private readonly registry = new ToolRegistry();

  async execute(client: Pick<PoolClient, 'query'>, row: AttentionRow, args: JsonObject, editor: ActorRef): Promise<ApprovedEdit> {
    const tool = row.tool;
    if (!isKnownTool(tool) || tool === MCP_TOOL || raisedByRun(row)) throw new EditNotSupportedError(`${tool} calls cannot be edited here: only built-in tools' calls`);
    if (KNOWN_TOOLS[tool].resourceKind === 'none' || this.registry.descriptor(tool).control) throw new EditNotSupportedError(`${tool} is a control tool: it cannot be edited`);
    let planned: PlannedCall;
    try {
      planned = this.registry.plan('edit', tool, args);
    } catch (error) {
      if (!(error instanceof ToolArgumentsError)) throw error;
      throw new EditInvalidError(`the edited arguments are not valid for ${tool}: ${error.message}`, { cause: error });
    }
    if (planned.computer !== null) throw new EditNotSupportedError('a call on a registered computer cannot be edited');
    const { rows } = await client.query<{ effective_digest: string }>(`SELECT effective_digest FROM policy.runs WHERE run_id = $1`, [row.run_id]);
    const grants = rows[0] ? await readGrantSet(client, rows[0].effective_digest) : null;
    if (grants === null || grants === 'damaged') throw new EditNotGrantedError('the run\'s compiled grants are not available');
    const check = checkCall({ tool, verb: planned.verb, resource: planned.resource, credentials: planned.credentials }, grants);
    if (!check.ok) throw new EditNotGrantedError(`the edited call is not granted (${check.code}): ${check.text}`);
    return {
      edit: { originalDigest: row.call_digest, editedDigest: planned.callDigest, arguments: planned.redactedArgs, editor },
      arguments: args,
      verb: planned.verb,
      resourceKey: check.resourceKey,
    };
  }
}

/** What a run raised for a person to look at (policy.attention.raise) asks about no call of its own. */
function raisedByRun(row: AttentionRow): boolean {
  const args = row.arguments;
  return row.resource_key === '' && typeof args === 'object' && args !== null && !Array.isArray(args) && 'kind' in args && 'evidence' in args;
}
