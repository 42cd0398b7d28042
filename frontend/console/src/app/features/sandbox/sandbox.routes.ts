import type { Routes } from '@angular/router';
import { ExecPage } from './exec.page';
import { SandboxPage } from './sandbox.page';

export default [
  { path: '', title: 'Sandbox · PacketAgent', component: SandboxPage },
  { path: ':execId', title: 'Exec · PacketAgent', component: ExecPage },
] satisfies Routes;
