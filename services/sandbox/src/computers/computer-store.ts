import type { Pool } from 'pg';
import type { PostgresEventStore } from '@packetagent/eventstore';
import { computerStream, type ActorRef, type Capabilities, type ComputerRecord, type SandboxEventData } from '@packetagent/contracts';
import { ComputerNotFoundError, ComputerVersionConflictError } from './computer-errors';
import { readComputerRecord, registeredEvent } from './computer-record';

/** The last probe result kept with the record, so a restarted replica can say when status was last observed. */
export interface StoredProbe {
  probedAt: Date;
  ok: boolean;
  affirmative: boolean;
  detail: string;
  lastSuccessAt: Date | null;
  /** A key the host presented that is not pinned, and when that was seen; null while the pinned key matches. */
  changedKey: { presented: string; at: Date } | null;
}

export interface StoredComputer {
  workspaceId: string;
  record: ComputerRecord;
  version: number;
  probe: StoredProbe | null;
}

interface ComputerRow {
  workspace_id: string;
  name: string;
  record: unknown;
  version: number;
  probed_at: Date | null;
  probe_ok: boolean | null;
  probe_affirmative: boolean | null;
  probe_detail: string | null;
  last_success_at: Date | null;
  presented_key: string | null;
  key_changed_at: Date | null;
}

function stored(row: ComputerRow): StoredComputer {
  return {
    workspaceId: row.workspace_id,
    record: readComputerRecord(row.name, row.record),
    version: row.version,
    probe: row.probed_at
      ? {
          probedAt: row.probed_at,
          ok: row.probe_ok ?? false,
          affirmative: row.probe_affirmative ?? false,
          detail: row.probe_detail ?? '',
          lastSuccessAt: row.last_success_at,
          changedKey: row.presented_key && row.key_changed_at ? { presented: row.presented_key, at: row.key_changed_at } : null,
        }
      : null,
  };
}

/**
 * sandbox.computers: one row per registered computer, written with its event (`computer-<ws>-<name>`)
 * in one transaction, so the record and its history never disagree. Rows that do not read are
 * refused loudly by readComputerRecord and never rewritten here.
 */
export class ComputerStore {
  constructor(
    private readonly pool: Pool,
    private readonly events: PostgresEventStore,
  ) {}

  async get(workspaceId: string, name: string): Promise<StoredComputer | null> {
    const { rows } = await this.pool.query<ComputerRow>('SELECT * FROM sandbox.computers WHERE workspace_id = $1 AND name = $2', [workspaceId, name]);
    return rows[0] ? stored(rows[0]) : null;
  }

  async require(workspaceId: string, name: string): Promise<StoredComputer> {
    const found = await this.get(workspaceId, name);
    if (!found) throw new ComputerNotFoundError(name);
    return found;
  }

  /** Every record of the workspace; one that does not read fails the whole list, loudly. */
  async list(workspaceId: string): Promise<StoredComputer[]> {
    const { rows } = await this.pool.query<ComputerRow>('SELECT * FROM sandbox.computers WHERE workspace_id = $1 ORDER BY name', [workspaceId]);
    return rows.map(stored);
  }

  /** Every ssh computer of every workspace, for the prober; unreadable rows are skipped and named. */
  async sshTargets(): Promise<{ readable: StoredComputer[]; unreadable: Array<{ workspaceId: string; name: string; error: string }> }> {
    const { rows } = await this.pool.query<ComputerRow>(`SELECT * FROM sandbox.computers WHERE record->>'kind' IS DISTINCT FROM 'local' ORDER BY workspace_id, name`);
    const readable: StoredComputer[] = [];
    const unreadable: Array<{ workspaceId: string; name: string; error: string }> = [];
    for (const row of rows) {
      try {
        readable.push(stored(row));
      } catch (error) {
        unreadable.push({ workspaceId: row.workspace_id, name: row.name, error: error instanceof Error ? error.message : String(error) });
      }
    }
    return { readable, unreadable };
  }

  /**
   * Writes the record (a registration or a replacement) with its event. `expectedVersion` refuses
   * to overwrite a change the caller has not seen; a record that does not read is never replaced.
   */
  async put(workspaceId: string, record: ComputerRecord, actor: ActorRef, options: { expectedVersion?: number; acceptedHostKey: string | null }): Promise<number> {
    return this.events.transaction(async (client) => {
      const { rows } = await client.query<ComputerRow>('SELECT * FROM sandbox.computers WHERE workspace_id = $1 AND name = $2 FOR UPDATE', [workspaceId, record.name]);
      const existing = rows[0];
      if (existing) readComputerRecord(existing.name, existing.record);
      if (options.expectedVersion !== undefined && existing?.version !== options.expectedVersion) {
        throw new ComputerVersionConflictError(`${record.name} is at version ${existing?.version ?? 'none'}, not ${options.expectedVersion}: read it again and decide on what is there now`);
      }
      const type = existing ? 'computer.updated' : 'computer.registered';
      const data: SandboxEventData<'computer.registered'> = registeredEvent(record, options.acceptedHostKey);
      // The row lock orders changes of one computer; refused host keys also append to its stream, so the stream may be ahead of the row.
      const appended = await this.events.append(computerStream(workspaceId, record.name), 'any', [{ type, data, actor }], { workspaceId, client });
      const version = appended.streamVersion;
      if (existing) {
        const targetChanged = JSON.stringify((existing.record as ComputerRecord).ssh) !== JSON.stringify(record.ssh);
        await client.query(
          `UPDATE sandbox.computers SET record = $3, version = $4${targetChanged ? ', probed_at = NULL, probe_ok = NULL, probe_affirmative = NULL, probe_detail = NULL, last_success_at = NULL, presented_key = NULL, key_changed_at = NULL' : ''}
           WHERE workspace_id = $1 AND name = $2`,
          [workspaceId, record.name, JSON.stringify(record), version],
        );
      } else {
        const inserted = await client.query(`INSERT INTO sandbox.computers (workspace_id, name, record, version) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, [workspaceId, record.name, JSON.stringify(record), version]);
        if (inserted.rowCount !== 1) throw new ComputerVersionConflictError(`${record.name} was registered by someone else just now: read it and decide again`);
      }
      return version;
    });
  }

  async remove(workspaceId: string, name: string, actor: ActorRef): Promise<void> {
    await this.events.transaction(async (client) => {
      const { rows } = await client.query<{ version: number }>('DELETE FROM sandbox.computers WHERE workspace_id = $1 AND name = $2 RETURNING version', [workspaceId, name]);
      const removed = rows[0];
      if (!removed) throw new ComputerNotFoundError(name);
      await this.events.append(computerStream(workspaceId, name), 'any', [{ type: 'computer.removed', data: { name }, actor }], { workspaceId, client });
    });
  }

  /** Keeps a probe's result with the record (and the capabilities it read); a record changed since the probe began keeps its own. */
  async recordProbe(workspaceId: string, name: string, version: number, probe: { ok: boolean; affirmative: boolean; detail: string; probedAt: Date; capabilities: Capabilities | null; presentedKey: string | null }): Promise<void> {
    await this.pool.query(
      `UPDATE sandbox.computers SET
         probed_at = $4, probe_ok = $5, probe_affirmative = $6, probe_detail = $7,
         last_success_at = CASE WHEN $5 THEN $4 ELSE last_success_at END,
         presented_key = $8,
         key_changed_at = CASE WHEN $8::text IS NULL THEN NULL WHEN presented_key IS NOT DISTINCT FROM $8 THEN key_changed_at ELSE $4 END,
         record = CASE WHEN $9::jsonb IS NULL THEN record ELSE jsonb_set(record, '{capabilities}', $9::jsonb) END
       WHERE workspace_id = $1 AND name = $2 AND version = $3`,
      [workspaceId, name, version, probe.probedAt, probe.ok, probe.affirmative, probe.detail.slice(0, 2_000), probe.presentedKey, probe.capabilities ? JSON.stringify(probe.capabilities) : null],
    );
  }

  /** A refused host key, as an event of the computer's stream (outside any record change). */
  async hostKeyRefused(workspaceId: string, data: SandboxEventData<'computer.host_key_refused'>): Promise<void> {
    await this.events.append(computerStream(workspaceId, data.name), 'any', [{ type: 'computer.host_key_refused', data, actor: { kind: 'service', id: 'sandbox' } }], { workspaceId });
  }
}
