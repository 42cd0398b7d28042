import type { Routes } from '@angular/router';
import { WorkerPage } from './worker.page';
import { WorkersPage } from './workers.page';

export default [
  { path: '', title: 'Workers · PacketAgent', component: WorkersPage },
  { path: ':workerId', title: 'Worker · PacketAgent', component: WorkerPage },
] satisfies Routes;
