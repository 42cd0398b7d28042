import type { Routes } from '@angular/router';
import { CredentialsPage } from './credentials.page';

export default [{ path: '', component: CredentialsPage }] satisfies Routes;
