import { inject } from '@angular/core';
import { Router, type ActivatedRouteSnapshot, type CanActivateFn } from '@angular/router';
import { Session } from './session';

/** Pages behind sign-in: nobody signed in goes to the sign-in page, and back afterwards. */
export const signedIn: CanActivateFn = async (_route, state) => {
  const router = inject(Router);
  const caller = await inject(Session).load();
  return caller ? true : router.createUrlTree(['/sign-in'], { queryParams: { next: state.url } });
};

/** `/w/:ws/...`: the workspace must be one of the caller's; it becomes the current one. */
export const inWorkspace: CanActivateFn = async (route: ActivatedRouteSnapshot) => {
  const session = inject(Session);
  const router = inject(Router);
  const caller = await session.load();
  const ws = route.paramMap.get('ws');
  if (!caller) return router.createUrlTree(['/sign-in']);
  if (!ws || !caller.workspaces.some((w) => w.id === ws)) return router.createUrlTree(['/']);
  session.workspaceId.set(ws);
  return true;
};

/** `/`: the first workspace's overview, or sign-in. */
export const homeRedirect: CanActivateFn = async () => {
  const router = inject(Router);
  const caller = await inject(Session).load();
  if (!caller) return router.createUrlTree(['/sign-in']);
  const first = caller.workspaces[0];
  return first ? router.createUrlTree(['/w', first.id, 'overview']) : router.createUrlTree(['/no-workspace']);
};
