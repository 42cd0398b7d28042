import { Module, type DynamicModule } from '@nestjs/common';
import { ComputersController } from './computers.controller';
import { COMPUTERS_ROUTES_OPTIONS, DEFAULT_COMPUTERS_ROUTES_OPTIONS, type ComputersRoutesOptions } from './computers-routes.options';

/** `/api/v1/workspaces/:ws/computers`: forwards to the computer registry of the sandbox service over NATS; needs BusModule. */
@Module({})
export class ComputersRoutesModule {
  static forRoot(options: Partial<ComputersRoutesOptions> = {}): DynamicModule {
    return {
      module: ComputersRoutesModule,
      controllers: [ComputersController],
      providers: [{ provide: COMPUTERS_ROUTES_OPTIONS, useValue: { ...DEFAULT_COMPUTERS_ROUTES_OPTIONS, ...options } }],
    };
  }
}
