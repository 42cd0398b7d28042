import { Inject, Injectable } from '@nestjs/common';
import type { CheckModelProvidersRequest, CheckModelProvidersResult, ModelProviderAvailability } from '@packetagent/contracts';
import type { ProviderRouter } from '@packetagent/providers';
import { PROVIDER_ROUTER } from '../supervisor.options';
import { availabilityOf, type ProviderFinding } from './provider-availability';
import { readRequestedProvider, type RequestedProvider } from './requested-provider';

/**
 * Whether this supervisor can serve each requested provider, asked of the router runs use, so the
 * answer follows the same keys, settings and preset resolution as a run would. Nothing is called
 * on the providers: a key that is set but wrong still counts as set up. Provider keys are the
 * deployment's, not a workspace's, so the answer is the same for every workspace.
 */
@Injectable()
export class CheckModelProviders {
  constructor(@Inject(PROVIDER_ROUTER) private readonly router: ProviderRouter) {}

  async execute(request: CheckModelProvidersRequest): Promise<CheckModelProvidersResult> {
    const providers = await Promise.all(request.providers.map((name) => this.check(name)));
    return { providers };
  }

  private async check(name: string): Promise<ModelProviderAvailability> {
    return availabilityOf(name, await this.find(readRequestedProvider(name)));
  }

  private async find(requested: RequestedProvider): Promise<ProviderFinding> {
    switch (requested.kind) {
      case 'provider':
        if (requested.provider === 'scripted') return { kind: 'scripted', hasScripts: this.router.hasScripts() };
        return { kind: 'provider', provider: requested.provider, setUp: await this.router.isSetUp(requested.provider) };
      case 'preset':
        return { kind: 'preset', preset: requested.preset, choice: await this.router.presetChoice(requested.preset) };
      default:
        return requested;
    }
  }
}
