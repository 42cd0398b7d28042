import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { ActorRef, ComputerRecord, ComputerStatus, ComputerView, ParsedComputerSpec } from '@packetagent/contracts';
import type { DriverSelection } from '../drivers/driver-selection';
import { HostKeyChangedError, HostKeyUnpinnedError, ComputerUnreachableError } from './computer-errors';
import type { ComputerKeys } from './computer-keys';
import { probeComputer, type ProbeResult } from './computer-probe';
import { computerView, recordFromSpec } from './computer-record';
import { computerStatus, ObservationBoard, targetKey } from './computer-status';
import type { ComputerStore, StoredComputer } from './computer-store';
import { SshConnectError, SshLink, type LinkTimings } from './ssh/ssh-link';

export interface RegistryOptions {
  staleAfterMs: number;
  timings: LinkTimings;
  log: (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
}

interface ObservedMessage {
  workspaceId: string;
  name: string;
  target: string;
  ok: boolean;
  affirmative: boolean;
  detail: string;
  probedAt: string;
  changedKey: { presented: string; at: string } | null;
}

export function observedSubject(prefix: string): string {
  return prefix ? `${prefix}.pa.sandbox.computer_observed` : 'pa.sandbox.computer_observed';
}

/**
 * The registry of computers: records (ComputerStore), registration rules (a pinned host key or an
 * explicit confirmation of the one presented), probes, and status from what this replica observed.
 * Probe results are published on core NATS so every replica observes them on its own clock.
 */
export class ComputerRegistry {
  private readonly board = new ObservationBoard();
  private subscription: Subscription | null = null;

  constructor(
    private readonly store: ComputerStore,
    private readonly keys: ComputerKeys,
    private readonly drivers: DriverSelection,
    private readonly nats: { nc: NatsConnection | null; prefix: string },
    private readonly options: RegistryOptions,
  ) {}

  /** Starts receiving probe results (every replica's, its own included). */
  listen(): void {
    const nc = this.nats.nc;
    if (!nc || this.subscription) return;
    this.subscription = nc.subscribe(observedSubject(this.nats.prefix), {
      callback: (error, message) => {
        if (error) return;
        try {
          const seen = message.json<ObservedMessage>();
          this.board.record(seen.workspaceId, seen.name, seen.target, {
            ok: seen.ok,
            affirmative: seen.affirmative,
            detail: seen.detail,
            probedAt: new Date(seen.probedAt),
            changedKey: seen.changedKey ? { presented: seen.changedKey.presented, at: new Date(seen.changedKey.at) } : null,
          });
        } catch {
          // A malformed message says nothing about any computer.
        }
      },
    });
  }

  async close(): Promise<void> {
    await this.subscription?.drain().catch(() => undefined);
    this.subscription = null;
  }

  async put(workspaceId: string, name: string, spec: ParsedComputerSpec, actor: ActorRef, options: { acceptHostKey?: string; expectedVersion?: number }): Promise<ComputerView> {
    const existing = await this.store.get(workspaceId, name);
    let hostKeys: string[] = [];
    let accepted: string | null = null;
    if (spec.kind === 'ssh' && spec.ssh) {
      hostKeys = [...spec.ssh.hostKeys];
      if (options.acceptHostKey && !hostKeys.includes(options.acceptHostKey)) {
        const presented = await this.presented(spec.ssh);
        if (presented.fingerprint !== options.acceptHostKey) {
          throw new HostKeyChangedError(`${spec.ssh.host}:${spec.ssh.port} now presents ${presented.fingerprint}, not the ${options.acceptHostKey} you confirmed: nothing was registered`);
        }
        hostKeys.push(presented.fingerprint);
        accepted = presented.fingerprint;
      }
      if (hostKeys.length === 0) {
        const presented = await this.presented(spec.ssh);
        throw new HostKeyUnpinnedError(`${spec.ssh.host}:${spec.ssh.port}`, presented.fingerprint, presented.type);
      }
    }
    const record = recordFromSpec(name, spec, hostKeys, actor, new Date(), existing?.record ?? null);
    const version = await this.store.put(workspaceId, record, actor, { acceptedHostKey: accepted, ...(options.expectedVersion !== undefined ? { expectedVersion: options.expectedVersion } : {}) });
    const stored = await this.store.require(workspaceId, name);
    return computerView(workspaceId, stored.record, version, await this.status(stored));
  }

  async get(workspaceId: string, name: string): Promise<ComputerView> {
    const stored = await this.store.require(workspaceId, name);
    return computerView(workspaceId, stored.record, stored.version, await this.status(stored));
  }

  async list(workspaceId: string): Promise<ComputerView[]> {
    const all = await this.store.list(workspaceId);
    return Promise.all(all.map(async (stored) => computerView(workspaceId, stored.record, stored.version, await this.status(stored))));
  }

  async remove(workspaceId: string, name: string, actor: ActorRef): Promise<{ name: string; removedAt: string }> {
    await this.store.remove(workspaceId, name, actor);
    this.board.forget(workspaceId, name);
    return { name, removedAt: new Date().toISOString() };
  }

  /** Probes now and answers the status that follows from it. */
  async probe(workspaceId: string, name: string): Promise<ComputerView> {
    const stored = await this.store.require(workspaceId, name);
    await this.probeStored(stored);
    const after = await this.store.require(workspaceId, name);
    return computerView(workspaceId, after.record, after.version, await this.status(after));
  }

  /** One probe of one computer: kept with the record, published to every replica, a changed key recorded once. */
  async probeStored(stored: StoredComputer): Promise<ProbeResult | null> {
    const { workspaceId, record } = stored;
    if (record.kind !== 'ssh') return null;
    const result = await probeComputer(record, () => this.keys.forProbe(workspaceId, record.name), this.options.timings);
    await this.store.recordProbe(workspaceId, record.name, stored.version, result);
    const previouslyPresented = stored.probe?.changedKey?.presented ?? null;
    if (result.presentedKey && result.presentedKey !== previouslyPresented && record.ssh) {
      this.options.log('warn', `computer ${record.name} presented a host key that is not pinned; connections are refused`, { workspaceId, presented: result.presentedKey });
      await this.store.hostKeyRefused(workspaceId, { name: record.name, host: record.ssh.host, port: record.ssh.port, presented: result.presentedKey, pinned: [...record.ssh.hostKeys], purpose: 'probe' });
    }
    const changedAt = result.presentedKey ? (result.presentedKey === previouslyPresented ? stored.probe!.changedKey!.at : result.probedAt) : null;
    const message: ObservedMessage = {
      workspaceId,
      name: record.name,
      target: targetKey(record),
      ok: result.ok,
      affirmative: result.affirmative,
      detail: result.detail,
      probedAt: result.probedAt.toISOString(),
      changedKey: result.presentedKey && changedAt ? { presented: result.presentedKey, at: changedAt.toISOString() } : null,
    };
    const nc = this.nats.nc;
    if (nc) {
      nc.publish(observedSubject(this.nats.prefix), JSON.stringify(message));
      // This replica's own result counts once it is published, whatever the subscription's timing.
      await nc.flush().catch(() => undefined);
    }
    this.board.record(workspaceId, record.name, message.target, { ok: result.ok, affirmative: result.affirmative, detail: result.detail, probedAt: result.probedAt, changedKey: message.changedKey ? { presented: message.changedKey.presented, at: new Date(message.changedKey.at) } : null });
    return result;
  }

  /** Records a host key refused while connecting for a command (the probe records its own). */
  async keyRefusedDuringExec(workspaceId: string, record: ComputerRecord, presented: string): Promise<void> {
    if (!record.ssh) return;
    await this.store.hostKeyRefused(workspaceId, { name: record.name, host: record.ssh.host, port: record.ssh.port, presented, pinned: [...record.ssh.hostKeys], purpose: 'exec' });
  }

  private async status(stored: StoredComputer): Promise<ComputerStatus> {
    if (stored.record.kind === 'local') {
      // The local computer is this sandbox: observed here and now.
      const now = new Date().toISOString();
      const hostKey = { state: 'not_applicable' as const, presented: null, at: null };
      const current = await this.drivers.current().then(
        ({ driver, probe }) => ({ ok: true, detail: `${driver.name}: ${probe.detail}` }),
        (error: unknown) => ({ ok: false, detail: error instanceof Error ? error.message : String(error) }),
      );
      return { state: current.ok ? 'online' : 'offline', observedAt: now, ageMs: 0, staleAfterMs: this.options.staleAfterMs, detail: current.detail, hostKey };
    }
    return computerStatus(stored.record, this.board.get(stored.workspaceId, stored.record.name, targetKey(stored.record)), stored.probe, this.board.now(), this.options.staleAfterMs);
  }

  private async presented(ssh: NonNullable<ParsedComputerSpec['ssh']>): Promise<{ fingerprint: string; type: string }> {
    try {
      return await SshLink.presentedKey(ssh, this.options.timings);
    } catch (error) {
      const why = error instanceof SshConnectError || error instanceof Error ? error.message : String(error);
      throw new ComputerUnreachableError(`the host key of ${ssh.host}:${ssh.port} could not be read, so nothing can be pinned: ${why}. Pin a fingerprint you checked on the computer (hostKeys) to register it while it is down`);
    }
  }
}
