import type { Routes } from '@angular/router';
import { RunPage } from './run.page';
import { RunsPage } from './runs.page';

export default [
  { path: '', title: 'Runs · PacketAgent', component: RunsPage },
  { path: ':runId', title: 'Run · PacketAgent', component: RunPage },
] satisfies Routes;
