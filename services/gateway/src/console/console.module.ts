import { Module, type DynamicModule } from '@nestjs/common';
import { join } from 'node:path';
import { ConsoleAssets } from './console-assets';
import { CONSOLE_ASSETS, ConsoleController } from './console.controller';

export interface ConsoleOptions {
  /** The built console (the directory holding index.html); by default the build next to the code. */
  directory?: string;
}

/**
 * Where the build is when none is named: `npm run build` copies it to dist/frontend/console/browser,
 * beside the compiled gateway; run from source, it is frontend/console/dist/browser.
 */
export function defaultConsoleDirectories(): string[] {
  const root = join(__dirname, '../../../..');
  return [join(root, 'frontend/console/browser'), join(root, 'frontend/console/dist/browser')];
}

/** Serves the operations console at `/` (see ConsoleController). Register it last among route modules. */
@Module({})
export class ConsoleModule {
  static forRoot(options: ConsoleOptions = {}): DynamicModule {
    const candidates = options.directory ? [options.directory] : defaultConsoleDirectories();
    return {
      module: ConsoleModule,
      controllers: [ConsoleController],
      providers: [{ provide: CONSOLE_ASSETS, useValue: new ConsoleAssets(candidates) }],
    };
  }
}
