import { Module, type DynamicModule } from '@nestjs/common';
import { PayloadsController } from '../payloads/payloads.controller';
import { LiveController } from './live.controller';
import { LiveFeed } from './live-feed';
import { DEFAULT_LIVE_OPTIONS, LIVE_OPTIONS, type LiveOptions } from './live.options';
import { PageRunEvents } from './usecases/page-run-events.usecase';

/** A run's events in pages, the payloads they reference, and SSE streams of a run's or a workspace's events; reads the event store and NATS. */
@Module({})
export class LiveRoutesModule {
  static forRoot(options: Partial<LiveOptions> = {}): DynamicModule {
    return {
      module: LiveRoutesModule,
      controllers: [LiveController, PayloadsController],
      providers: [{ provide: LIVE_OPTIONS, useValue: { ...DEFAULT_LIVE_OPTIONS, ...options } }, LiveFeed, PageRunEvents],
    };
  }
}
