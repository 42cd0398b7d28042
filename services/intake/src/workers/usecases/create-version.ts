import { Injectable } from '@nestjs/common';
import type { PoolClient } from 'pg';
import { canonicalDefinition, parseWorkerDefinition, ValidationError, type ActorRef, type WorkerDefinition } from '@packetagent/contracts';
import { PostgresEventStore } from '@packetagent/eventstore';
import { NotFoundError } from '../../shared/errors';
import { Streams } from '../../shared/ids';
import type { WorkerRow } from '../worker.rows';
import { PinMcpTools } from './pin-mcp-tools';

export interface CreateVersion {
  workspaceId: string;
  actor: ActorRef;
  workerId: string;
  source: string;
  format: 'json' | 'yaml';
}

/** A definition parsed, its MCP tools pinned, and its digest: everything checked before a write. */
export interface PreparedVersion {
  definition: WorkerDefinition;
  canonical: string;
  digest: string;
  /** The definition as written, kept beside the canonical form for editors. */
  source: { text: string; format: 'json' | 'yaml' };
}

export interface StoredVersion {
  version: number;
  digest: string;
  created: boolean;
}

/**
 * Validates a definition, pins the tools its MCP servers list now, and stores it as the worker's
 * next immutable version, identified by the SHA-256 of its canonical form (pinned tools
 * included). A definition equal to the latest version creates nothing.
 */
@Injectable()
export class CreateVersionUseCase {
  constructor(
    private readonly store: PostgresEventStore,
    private readonly mcpTools: PinMcpTools,
  ) {}

  async execute(command: CreateVersion): Promise<StoredVersion> {
    const prepared = await this.prepare(command.workspaceId, command.source, command.format);
    return this.store.transaction(async (client) => {
      const { rows } = await client.query<WorkerRow>(
        'SELECT * FROM intake.workers WHERE id = $1 AND workspace_id = $2 FOR UPDATE',
        [command.workerId, command.workspaceId],
      );
      const worker = rows[0];
      if (!worker) throw new NotFoundError('worker', command.workerId);
      return this.storeIn(client, worker, prepared, command);
    });
  }

  /** Parsing and listing happen before any lock or write: a definition refused touches nothing. */
  async prepare(workspaceId: string, source: string, format: 'json' | 'yaml'): Promise<PreparedVersion> {
    const definition = await this.mcpTools.pin(workspaceId, parseWorkerDefinition(source, format));
    return { definition, ...canonicalDefinition(definition), source: { text: source, format } };
  }

  /** Inside the caller's transaction, with the worker's row locked (FOR UPDATE). */
  async storeIn(client: PoolClient, worker: WorkerRow, prepared: PreparedVersion, command: { workspaceId: string; actor: ActorRef }): Promise<StoredVersion> {
    const { definition, canonical, digest, source } = prepared;
    if (definition.name !== worker.name) {
      throw new ValidationError('invalid definition', [
        { path: 'name', message: `"${definition.name}" does not match the worker's name "${worker.name}"` },
      ]);
    }
    const latest = await client.query<{ version: number; digest: string }>(
      'SELECT version, digest FROM intake.versions WHERE worker_id = $1 AND version = $2',
      [worker.id, worker.latest_version],
    );
    const head = latest.rows[0];
    if (head && head.digest.trim() === digest) return { version: head.version, digest, created: false };

    const version = worker.latest_version + 1;
    const stored = JSON.parse(canonical) as unknown;
    await client.query(
      'INSERT INTO intake.versions (worker_id, version, workspace_id, digest, definition, source_text, source_format) VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7)',
      [worker.id, version, command.workspaceId, digest, canonical, source.text, source.format],
    );
    await client.query('UPDATE intake.workers SET latest_version = $2 WHERE id = $1', [worker.id, version]);
    await this.store.append(
      Streams.worker(worker.id),
      // worker.created plus one event per version: the stream's version is the fence.
      worker.latest_version + 1,
      [{ type: 'worker.version_created', data: { workerId: worker.id, version, digest, definition: stored }, actor: command.actor }],
      { workspaceId: command.workspaceId, client },
    );
    return { version, digest, created: true };
  }
}
