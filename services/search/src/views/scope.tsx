/** @jsxRuntime automatic @jsxImportSource hono/jsx */
/**
 * The header's account of what the viewer sees: "all events", "no events", or the sources, types
 * and producers of its scope (the full list in the title). The scope reaches the header through
 * the request's async context (`shownScope`, set once per request in app.tsx), so no page has to
 * pass it down.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ReadScope } from '@event-observatory/store';

const current = new AsyncLocalStorage<ReadScope>();

/** Runs `next` (the rest of the request) with `scope` as the one the header shows. */
export function shownScope<T>(scope: ReadScope, next: () => Promise<T>): Promise<T> {
  return current.run(scope, next);
}

/** What `scope` admits, in words: `['all events']`, `[]` (nothing), or one phrase per list. */
export function scopePhrases(scope: ReadScope): string[] {
  if (scope.all) return ['all events'];
  return [
    ...scope.sources.map((s) => `source ${s}`),
    ...scope.sourcePrefixes.map((s) => `sources ${s}…`),
    ...scope.typePrefixes.map((t) => `types ${t}…`),
    ...scope.producers.map((p) => `producer ${p}`),
  ];
}

/** Shown beside who is logged in; nothing outside a request that has a viewer. */
export function ScopeBadge() {
  const scope = current.getStore();
  if (!scope) return null;
  const phrases = scopePhrases(scope);
  const shown =
    phrases.length === 0
      ? 'no events'
      : phrases.length <= 2
        ? phrases.join(', ')
        : `${phrases.length} scopes`;
  return (
    <span class="scope" title={phrases.join('\n') || 'No visibility rule matches you'}>
      Sees: {shown}
    </span>
  );
}
