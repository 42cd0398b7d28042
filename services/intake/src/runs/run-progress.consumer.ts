import { Injectable } from '@nestjs/common';
import { OnEvent } from '@packetagent/bus';
import type { DecodedEvent } from '@packetagent/contracts';
import { RecordRunProgressUseCase } from './usecases/record-run-progress';

@Injectable()
export class RunProgressConsumer {
  constructor(private readonly recordRunProgress: RecordRunProgressUseCase) {}

  @OnEvent({ durable: 'intake-run-progress', filter: '*.run.>' })
  async onRunEvent(event: DecodedEvent): Promise<void> {
    await this.recordRunProgress.execute(event);
  }
}
