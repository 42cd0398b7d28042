import { createHash } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import type { z } from 'zod';
import { CommandBus, type Topology } from '@packetagent/bus';
import { ComputerCommands, ComputerErrorCodes, DomainError, ValidationError, type ComputerView, type ParsedComputerSpec } from '@packetagent/contracts';

type PutRequest = z.output<typeof ComputerCommands.put.request>;

/** A fingerprint as `ssh-keygen -lf` prints it, derived from `seed`. */
export function fingerprintOf(seed: string): string {
  return `SHA256:${createHash('sha256').update(seed).digest('base64').replace(/=+$/, '')}`;
}

/** The key every host of the stand-in presents, unless the spec names it in `presenting`. */
export const PRESENTED = fingerprintOf('the host key');
export const UNREACHABLE_HOST = 'unreachable.example.com';

class Refused extends DomainError {
  constructor(
    readonly code: string,
    message: string,
    override readonly retryable = false,
  ) {
    super(message);
  }
}

/** As the registry refuses an unpinned key: a validation error, so its issue crosses the bus. */
class HostKeyUnpinned extends ValidationError {
  override readonly code = ComputerErrorCodes.hostKeyUnpinned;
}

/**
 * Stands in for the sandbox service's computer registry on the real bus (the gateway may not
 * depend on it): keeps computers per workspace and name, refuses the way ComputerCommands says
 * the registry does, and records every request it was sent.
 */
export class StandInComputerRegistry {
  readonly requests: Array<{ command: string; request: { workspaceId: string; name?: string; actor?: unknown } }> = [];
  /** `<workspace>/<name>` of records the registry cannot read (damaged, or from a newer version). */
  readonly unreadable = new Set<string>();
  /** host → the key it presents, when not PRESENTED. */
  readonly presenting = new Map<string, string>();
  private readonly stored = new Map<string, ComputerView>();
  private readonly bus: CommandBus;

  constructor(
    private readonly nc: NatsConnection,
    topo: Topology,
  ) {
    this.bus = new CommandBus(nc, topo);
  }

  async start(): Promise<void> {
    this.bus.handle(ComputerCommands.put, async (request) => {
      this.seen('put', request);
      const existing = this.readable(request.workspaceId, request.name, false);
      if (request.expectedVersion !== undefined && request.expectedVersion !== (existing?.version ?? 0)) {
        throw new Refused(ComputerErrorCodes.versionConflict, `computer ${request.name} is at version ${existing?.version ?? 0}, not ${request.expectedVersion}`);
      }
      const hostKeys = this.pinnedKeys(request);
      return this.keep(request, existing, hostKeys);
    });
    this.bus.handle(ComputerCommands.get, async (request) => this.readable(request.workspaceId, request.name, true)!);
    this.bus.handle(ComputerCommands.list, async (request) => ({ items: [...this.stored.values()].filter((view) => view.workspaceId === request.workspaceId) }));
    this.bus.handle(ComputerCommands.remove, async (request) => {
      this.seen('remove', request);
      this.readable(request.workspaceId, request.name, true);
      this.stored.delete(`${request.workspaceId}/${request.name}`);
      return { name: request.name, removedAt: new Date().toISOString() };
    });
    this.bus.handle(ComputerCommands.probe, async (request) => {
      this.seen('probe', request);
      const view = this.readable(request.workspaceId, request.name, true)!;
      const now = new Date().toISOString();
      const presented = view.ssh ? this.presentedBy(view.ssh.host) : null;
      // As the registry does: a probe refused for an unpinned key is part of the status, not an error.
      const status: ComputerView['status'] =
        presented !== null && !view.ssh!.hostKeys.includes(presented)
          ? { ...view.status, state: 'offline', ageMs: 0, detail: `${view.ssh!.host} presented ${presented}, which is not pinned`, hostKey: { state: 'changed', presented, at: now } }
          : { ...view.status, state: 'online', observedAt: now, ageMs: 0, detail: 'Linux x86_64, 8 CPUs' };
      const observed: ComputerView = { ...view, status };
      this.stored.set(`${request.workspaceId}/${request.name}`, observed);
      return observed;
    });
    await this.nc.flush();
  }

  stop(): Promise<void> {
    return this.bus.drain();
  }

  /** Every request of a kind the registry was sent, for asserting what reached it (and what did not). */
  sent(command: string): Array<{ workspaceId: string; name?: string; actor?: unknown; [field: string]: unknown }> {
    return this.requests.filter((entry) => entry.command === command).map((entry) => entry.request);
  }

  private seen(command: string, request: { workspaceId: string; name?: string; actor?: unknown }): void {
    this.requests.push({ command, request });
  }

  private presentedBy(host: string): string {
    return this.presenting.get(host) ?? PRESENTED;
  }

  private readable(workspaceId: string, name: string, required: boolean): ComputerView | null {
    const key = `${workspaceId}/${name}`;
    if (this.unreadable.has(key)) throw new Refused(ComputerErrorCodes.recordUnreadable, `the record of computer ${name} was written by record version 2; this build reads version 1 and leaves it as it is`);
    const view = this.stored.get(key) ?? null;
    if (!view && required) throw new Refused(ComputerErrorCodes.notFound, `computer ${name} not found`);
    return view;
  }

  /** As the registry does: the host is asked for its key only to confirm an accepted one, or to present one when none is pinned. */
  private pinnedKeys(request: PutRequest): string[] {
    const ssh = request.spec.ssh;
    if (!ssh) return [];
    const pinned = [...ssh.hostKeys];
    if (request.acceptHostKey && !pinned.includes(request.acceptHostKey)) {
      const presented = this.reach(ssh);
      if (presented !== request.acceptHostKey) throw new Refused(ComputerErrorCodes.hostKeyChanged, `${ssh.host}:${ssh.port} now presents ${presented}, not the ${request.acceptHostKey} you confirmed: nothing was registered`);
      pinned.push(presented);
    }
    if (pinned.length === 0) {
      const presented = this.reach(ssh);
      throw new HostKeyUnpinned(`${ssh.host}:${ssh.port} presented the ssh-ed25519 host key ${presented}; nothing is pinned`, [
        { path: 'acceptHostKey', message: `the host presented ${presented} (ssh-ed25519); confirm it to pin it` },
      ]);
    }
    return pinned;
  }

  private reach(ssh: { host: string; port: number }): string {
    if (ssh.host === UNREACHABLE_HOST) throw new Refused(ComputerErrorCodes.unreachable, `${ssh.host}:${ssh.port} did not answer within 10 s`, true);
    return this.presentedBy(ssh.host);
  }

  private keep(request: PutRequest, existing: ComputerView | null, hostKeys: string[]): ComputerView {
    const spec = request.spec as ParsedComputerSpec;
    const now = new Date().toISOString();
    const view: ComputerView = {
      workspaceId: request.workspaceId,
      name: request.name,
      kind: spec.kind,
      description: spec.description,
      ssh: spec.ssh ? { host: spec.ssh.host, port: spec.ssh.port, user: spec.ssh.user, hostKeys, keyCredential: spec.ssh.keyCredential } : null,
      roots: spec.roots,
      policy: { network: 'ask', write: 'ask', shell: 'ask', secrets: 'deny', approval: 'explicit', ...spec.policy },
      capabilities: null,
      version: (existing?.version ?? 0) + 1,
      createdBy: existing?.createdBy ?? request.actor,
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
      status: { state: 'unknown', observedAt: null, ageMs: null, staleAfterMs: 45_000, detail: 'not probed yet', hostKey: { state: spec.kind === 'ssh' ? 'pinned' : 'not_applicable', presented: null, at: null } },
    };
    this.stored.set(`${request.workspaceId}/${request.name}`, view);
    return view;
  }
}
