import { DomainError, SandboxErrorCodes, type SandboxDriverName } from '@packetagent/contracts';
import type { DriverProbe, SandboxDriver } from './sandbox-driver';

/** No driver can run commands here. There is no fallback to the host, ever. */
export class SandboxUnavailableError extends DomainError {
  readonly code = SandboxErrorCodes.unavailable;
}

export interface ProbedDriver {
  driver: SandboxDriver;
  probe: DriverProbe;
}

/**
 * The drivers in the order `auto` tries them, and the one commands run in. Probed at start and
 * again whenever no driver was available, so installing bubblewrap needs no restart.
 */
export class DriverSelection {
  private probed: Promise<ProbedDriver[]> | null = null;

  constructor(
    private readonly drivers: readonly SandboxDriver[],
    private readonly choice: 'auto' | SandboxDriverName,
  ) {}

  async all(): Promise<ProbedDriver[]> {
    this.probed ??= Promise.all(this.drivers.map(async (driver) => ({ driver, probe: await driver.probe().catch((error: unknown) => ({ available: false, detail: `probe failed: ${error instanceof Error ? error.message : String(error)}`, unenforced: [] })) })));
    return this.probed;
  }

  /** Ends what commands of services on this host that died left running, in every driver that can tell; answers how many. */
  async reclaim(): Promise<number> {
    let reclaimed = 0;
    for (const driver of this.drivers) reclaimed += (await driver.reclaim?.().catch(() => 0)) ?? 0;
    return reclaimed;
  }

  /** The driver commands run in, or SandboxUnavailableError naming what to install. */
  async current(): Promise<ProbedDriver> {
    let found = this.pick(await this.all());
    if (!found) {
      this.probed = null;
      found = this.pick(await this.all());
    }
    if (found) return found;
    const probes = await this.all();
    const why = probes.map(({ driver, probe }) => `${driver.name}: ${probe.detail}`).join('; ');
    throw new SandboxUnavailableError(`no sandbox driver is available${this.choice === 'auto' ? '' : ` (PACKETAGENT_SANDBOX_DRIVER=${this.choice})`}, so nothing runs: ${why}`);
  }

  private pick(probes: ProbedDriver[]): ProbedDriver | undefined {
    return probes.find(({ driver, probe }) => probe.available && (this.choice === 'auto' || driver.name === this.choice));
  }
}
