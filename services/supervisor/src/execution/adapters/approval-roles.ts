import { attentionStream, RoleSchema, type Role } from '@packetagent/contracts';
import type { PostgresEventStore } from '@packetagent/eventstore';

/** Reads the approver's role recorded with an attention's approval. */
export type ApprovalRoleReader = (attentionId: string) => Promise<Role | null>;

/**
 * The role comes from the `attention.approved` event itself, read as stored: an approval that
 * recorded none, or a value that is not a role, answers null, which nothing treats as a grant.
 */
export function approvalRoleReader(store: PostgresEventStore): ApprovalRoleReader {
  return async (attentionId) => {
    const events = await store.readStream(attentionStream(attentionId));
    const approved = events.filter((event) => event.type === 'attention.approved').at(-1);
    const role = RoleSchema.safeParse((approved?.data as { role?: unknown } | undefined)?.role);
    return role.success ? role.data : null;
  };
}
