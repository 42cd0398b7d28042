import { z } from 'zod';
import { defineCommand } from '../commands';
import { ActorSchema } from '../control-plane/intake.commands.v1';
import { Identifiers } from '../envelope';
import { ComputerNameSchema, ComputerSpecSchema, ComputerViewSchema, HostKeyFingerprintSchema } from './computer.v1';

const workspaceId = z.string().regex(Identifiers.workspace);

/** The registry of computers, served by the sandbox service (ADR 0022). */
export const ComputerCommands = {
  /**
   * Registers or replaces a computer. An ssh computer without a pinned host key is refused with
   * `host_key_unpinned` carrying the key it presented; sending that fingerprint back as
   * `acceptHostKey` pins it. `expectedVersion` (from a read) refuses to overwrite a newer change.
   */
  put: defineCommand(
    'sandbox.computers.put',
    z.strictObject({
      workspaceId,
      name: ComputerNameSchema,
      spec: ComputerSpecSchema,
      acceptHostKey: HostKeyFingerprintSchema.optional(),
      expectedVersion: z.number().int().positive().optional(),
      actor: ActorSchema,
    }),
    ComputerViewSchema,
  ),
  get: defineCommand('sandbox.computers.get', z.strictObject({ workspaceId, name: ComputerNameSchema }), ComputerViewSchema),
  list: defineCommand('sandbox.computers.list', z.strictObject({ workspaceId }), z.object({ items: z.array(ComputerViewSchema) })),
  remove: defineCommand(
    'sandbox.computers.remove',
    z.strictObject({ workspaceId, name: ComputerNameSchema, actor: ActorSchema }),
    z.object({ name: ComputerNameSchema, removedAt: z.iso.datetime({ offset: true }) }),
  ),
  /** Probes now (connect, verify the host key, read capabilities) and answers the status that follows. */
  probe: defineCommand('sandbox.computers.probe', z.strictObject({ workspaceId, name: ComputerNameSchema, actor: ActorSchema }), ComputerViewSchema),
} as const;

/** Codes of the errors the computer commands answer with (other than validation). */
export const ComputerErrorCodes = {
  notFound: 'computer_not_found',
  /** An ssh computer without a pinned host key: the error's `presented` is the key the host showed. */
  hostKeyUnpinned: 'host_key_unpinned',
  /** The host presented a key that is not pinned: the connection was refused and recorded. */
  hostKeyChanged: 'host_key_changed',
  /** The stored record is damaged or was written by a newer version: it is left exactly as it is. */
  recordUnreadable: 'computer_record_unreadable',
  /** The record changed since the version the caller read. */
  versionConflict: 'computer_version_conflict',
  /** The computer could not be reached to read its host key or run the command. */
  unreachable: 'computer_unreachable',
} as const;
