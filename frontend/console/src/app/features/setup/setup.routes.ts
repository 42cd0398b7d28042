import type { Routes } from '@angular/router';
import { SetupPage } from './setup.page';

export default [{ path: '', component: SetupPage }] satisfies Routes;
