import { BaseRouteReuseStrategy, type ActivatedRouteSnapshot } from '@angular/router';

/**
 * A page is rebuilt when its parameters change (another workspace, another run), so each
 * page loads its data once, at construction, for the parameters it was built for.
 */
export class ParamsRouteReuseStrategy extends BaseRouteReuseStrategy {
  override shouldReuseRoute(future: ActivatedRouteSnapshot, current: ActivatedRouteSnapshot): boolean {
    return future.routeConfig === current.routeConfig && sameParams(future, current);
  }
}

function sameParams(a: ActivatedRouteSnapshot, b: ActivatedRouteSnapshot): boolean {
  const keys = new Set([...a.paramMap.keys, ...b.paramMap.keys]);
  for (const key of keys) if (a.paramMap.get(key) !== b.paramMap.get(key)) return false;
  return true;
}
