import { Module, type DynamicModule } from '@nestjs/common';
import { ExecLiveFeed } from './exec-live-feed';
import { ExecStreams } from './exec-streams';
import { SandboxController } from './sandbox.controller';
import { DEFAULT_SANDBOX_ROUTES_OPTIONS, SANDBOX_ROUTES_OPTIONS, type SandboxRoutesOptions } from './sandbox-routes.options';
import { StartExec } from './usecases/start-exec/start-exec.usecase';

/**
 * `/api/v1/workspaces/:ws/sandbox/...`: an operator's commands in the sandbox, their live output
 * and their whole output. Talks to the sandbox service over NATS (commands and its live subjects)
 * and reads the output from the payload store; needs BusModule and EventStoreModule.
 */
@Module({})
export class SandboxRoutesModule {
  static forRoot(options: Partial<SandboxRoutesOptions> = {}): DynamicModule {
    return {
      module: SandboxRoutesModule,
      controllers: [SandboxController],
      providers: [{ provide: SANDBOX_ROUTES_OPTIONS, useValue: { ...DEFAULT_SANDBOX_ROUTES_OPTIONS, ...options } }, ExecLiveFeed, ExecStreams, StartExec],
    };
  }
}
