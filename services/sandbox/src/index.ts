export { SandboxModule } from './sandbox.module';
export type { SandboxModuleOptions } from './sandbox.options';
export { readStoredOutput } from './exec/output-capture';
