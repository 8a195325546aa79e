/**
 * The methods an app declares for a path, so a request with another method on a declared path is
 * answered 405 with `Allow` (RFC 9110 section 15.5.6) instead of 404.
 */
import { METHOD_NAME_ALL } from 'hono/router';
import { TrieRouter } from 'hono/router/trie-router';

/** What is read of a Hono app: its registered routes (middleware are registered as `ALL`). */
export interface RoutedApp {
  routes: ReadonlyArray<{ method: string; path: string }>;
}

/**
 * Returns a lookup from a path to the methods declared for it (sorted; `HEAD` wherever `GET` is,
 * as Hono answers it), empty when no route matches the path. The routes are read on first use and
 * again whenever more were registered, so the lookup can be made before the routes exist.
 */
export function declaredMethods(app: RoutedApp): (path: string) => string[] {
  let known = -1;
  let router = new TrieRouter<string>();
  return (path) => {
    if (app.routes.length !== known) {
      known = app.routes.length;
      router = new TrieRouter<string>();
      for (const r of app.routes)
        if (r.method !== METHOD_NAME_ALL) router.add(METHOD_NAME_ALL, r.path, r.method);
    }
    const methods = new Set(router.match('GET', path)[0].map(([method]) => method));
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort();
  };
}
