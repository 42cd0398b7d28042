import type { Routes } from '@angular/router';
import { ApprovalsPage } from './approvals.page';

export default [{ path: '', component: ApprovalsPage }] satisfies Routes;
