import type { Routes } from '@angular/router';
import { OverviewPage } from './overview.page';

export default [{ path: '', component: OverviewPage }] satisfies Routes;
