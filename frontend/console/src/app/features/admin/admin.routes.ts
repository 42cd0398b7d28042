import type { Routes } from '@angular/router';
import { AdminPage } from './admin.page';

export default [{ path: '', component: AdminPage }] satisfies Routes;
