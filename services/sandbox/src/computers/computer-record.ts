import {
  COMPUTER_RECORD_VERSION,
  ComputerPolicySchema,
  ComputerRecordSchema,
  type ActorRef,
  type ComputerRecord,
  type ComputerStatus,
  type ComputerView,
  type ParsedComputerSpec,
  type SandboxEventData,
} from '@packetagent/contracts';
import { ComputerRecordUnreadableError } from './computer-errors';

/**
 * A stored record as this build reads it. A newer layout or a damaged one is refused loudly and
 * left as it is: nothing here ever rewrites a record it could not read.
 */
export function readComputerRecord(name: string, raw: unknown): ComputerRecord {
  const version = typeof raw === 'object' && raw !== null ? (raw as { recordVersion?: unknown }).recordVersion : undefined;
  if (typeof version === 'number' && version > COMPUTER_RECORD_VERSION) {
    throw new ComputerRecordUnreadableError(`the record of ${name} has layout version ${version}, newer than this build reads (${COMPUTER_RECORD_VERSION}); it is left as it is: upgrade, or remove it explicitly`);
  }
  const parsed = ComputerRecordSchema.safeParse(raw);
  if (!parsed.success) {
    const where = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
    throw new ComputerRecordUnreadableError(`the record of ${name} is damaged (${where}); it is left as it is: remove it explicitly to register it again`);
  }
  return parsed.data;
}

/** The record a registration makes: conservative policy defaults filled in, creation kept from the one it replaces. */
export function recordFromSpec(name: string, spec: ParsedComputerSpec, hostKeys: readonly string[], actor: ActorRef, now: Date, replaces: ComputerRecord | null): ComputerRecord {
  return {
    recordVersion: COMPUTER_RECORD_VERSION,
    name,
    kind: spec.kind,
    description: spec.description,
    ssh: spec.ssh ? { host: spec.ssh.host, port: spec.ssh.port, user: spec.ssh.user, hostKeys: [...new Set(hostKeys)], keyCredential: spec.ssh.keyCredential } : null,
    roots: [...new Set(spec.roots)],
    policy: ComputerPolicySchema.parse(spec.policy),
    // Capabilities of another host are not this one's.
    capabilities: replaces && sameTarget(replaces, spec) ? replaces.capabilities : null,
    createdBy: replaces?.createdBy ?? actor,
    createdAt: replaces?.createdAt ?? now.toISOString(),
    updatedAt: now.toISOString(),
  };
}

function sameTarget(record: ComputerRecord, spec: ParsedComputerSpec): boolean {
  return record.kind === spec.kind && record.ssh?.host === spec.ssh?.host && record.ssh?.port === spec.ssh?.port && record.ssh?.user === spec.ssh?.user;
}

export function registeredEvent(record: ComputerRecord, acceptedHostKey: string | null): SandboxEventData<'computer.registered'> {
  return {
    name: record.name,
    kind: record.kind,
    description: record.description,
    ssh: record.ssh ? { ...record.ssh, hostKeys: [...record.ssh.hostKeys] } : null,
    roots: [...record.roots],
    policy: { ...record.policy },
    acceptedHostKey,
  };
}

export function computerView(workspaceId: string, record: ComputerRecord, version: number, status: ComputerStatus): ComputerView {
  return {
    workspaceId,
    name: record.name,
    kind: record.kind,
    description: record.description,
    ssh: record.ssh ? { ...record.ssh, hostKeys: [...record.ssh.hostKeys] } : null,
    roots: [...record.roots],
    policy: { ...record.policy },
    capabilities: record.capabilities,
    version,
    createdBy: record.createdBy,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    status,
  };
}
