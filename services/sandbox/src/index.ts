export { SandboxModule } from './sandbox.module';
export type { SandboxModuleOptions } from './sandbox.options';
