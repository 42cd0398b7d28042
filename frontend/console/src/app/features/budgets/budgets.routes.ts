import type { Routes } from '@angular/router';
import { BudgetsPage } from './budgets.page';

export default [{ path: '', component: BudgetsPage }] satisfies Routes;
