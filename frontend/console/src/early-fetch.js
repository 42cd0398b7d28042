// Loaded async from the head of index.html, so it runs as soon as it arrives, before the app's
// bundle: asks the API for what the landing page will need, so those answers travel while the
// bundle is still being fetched and evaluated. core/prefetch.ts hands each answer, once,
// to the first GET of the same path.
(function (scope) {
  'use strict';

  /** The API paths worth fetching at once for a page at `pathname`. */
  function paths(pathname) {
    var found = ['/api/v1/auth/me'];
    var overview = /^\/w\/([A-Za-z0-9_-]{1,64})(?:\/overview)?\/?$/.exec(pathname);
    if (overview) found.push('/api/v1/workspaces/' + overview[1] + '/overview');
    return found;
  }

  function prefetch(pathname, fetcher, now) {
    var early = { at: now, responses: {} };
    paths(pathname).forEach(function (path) {
      var response = fetcher(path, { headers: { accept: 'application/json, application/problem+json' }, credentials: 'same-origin' });
      // A failure is left for the page's own request to meet and report.
      response.catch(function () {});
      early.responses[path] = response;
    });
    return early;
  }

  scope.paEarlyFetch = { paths: paths, prefetch: prefetch };
  if (typeof scope.location !== 'undefined' && typeof scope.fetch === 'function') {
    scope.paEarlyFetch.held = prefetch(scope.location.pathname, scope.fetch.bind(scope), Date.now());
  }
})(globalThis);
