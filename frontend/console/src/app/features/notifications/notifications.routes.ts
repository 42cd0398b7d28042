import type { Routes } from '@angular/router';
import { NotificationsPage } from './notifications.page';

export default [{ path: '', component: NotificationsPage }] satisfies Routes;
