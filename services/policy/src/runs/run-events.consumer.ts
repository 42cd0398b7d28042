import { Injectable } from '@nestjs/common';
import { OnEvent } from '@packetagent/bus';
import type { DecodedEvent } from '@packetagent/contracts';
import { ApplyRunAdmitted } from './apply-run-admitted';

@Injectable()
export class RunEventsConsumer {
  constructor(private readonly applyRunAdmitted: ApplyRunAdmitted) {}

  @OnEvent({ durable: 'policy-runs', filter: '*.run.run.admitted' })
  async onRunAdmitted(event: DecodedEvent): Promise<void> {
    await this.applyRunAdmitted.execute(event);
  }
}
