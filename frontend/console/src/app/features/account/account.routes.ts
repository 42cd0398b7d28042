import type { Routes } from '@angular/router';
import { AccountPage } from './account.page';

export default [{ path: '', component: AccountPage }] satisfies Routes;
