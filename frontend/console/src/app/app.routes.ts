import type { Routes } from '@angular/router';
import { homeRedirect, inWorkspace, signedIn } from './core/guards';
import { NotFoundPage } from './not-found.page';
// The landing page is in the initial bundle: lazily loaded it costs one more round trip before its data shows.
import overviewRoutes from './features/overview/overview.routes';

export const routes: Routes = [
  { path: 'sign-in', title: 'Sign in · PacketAgent', loadChildren: () => import('./features/sign-in/sign-in.routes') },
  { path: 'setup', title: 'First-run setup · PacketAgent', loadChildren: () => import('./features/setup/setup.routes') },
  { path: 'account', title: 'Your account · PacketAgent', canActivate: [signedIn], loadChildren: () => import('./features/account/account.routes') },
  {
    path: 'w/:ws',
    canActivate: [signedIn, inWorkspace],
    children: [
      { path: '', pathMatch: 'full', redirectTo: 'overview' },
      { path: 'overview', title: 'Overview · PacketAgent', children: overviewRoutes },
      { path: 'workers', loadChildren: () => import('./features/workers/workers.routes') },
      { path: 'studio', loadChildren: () => import('./features/studio/studio.routes') },
      { path: 'runs', loadChildren: () => import('./features/runs/runs.routes') },
      { path: 'approvals', title: 'Approvals · PacketAgent', loadChildren: () => import('./features/approvals/approvals.routes') },
      { path: 'notifications', title: 'Notifications · PacketAgent', loadChildren: () => import('./features/notifications/notifications.routes') },
      { path: 'budgets', title: 'Budgets · PacketAgent', loadChildren: () => import('./features/budgets/budgets.routes') },
      { path: 'credentials', title: 'Credentials · PacketAgent', loadChildren: () => import('./features/credentials/credentials.routes') },
      { path: 'sandbox', loadChildren: () => import('./features/sandbox/sandbox.routes') },
      { path: 'computers', loadChildren: () => import('./features/computers/computers.routes') },
      { path: 'audit', title: 'Audit · PacketAgent', loadChildren: () => import('./features/audit/audit.routes') },
      { path: 'admin', title: 'Administration · PacketAgent', loadChildren: () => import('./features/admin/admin.routes') },
    ],
  },
  { path: '', pathMatch: 'full', canActivate: [homeRedirect], children: [] },
  { path: '**', title: 'Not found · PacketAgent', component: NotFoundPage },
];
