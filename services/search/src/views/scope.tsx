/** @jsxRuntime automatic @jsxImportSource hono/jsx */
/**
 * The header's account of what the viewer sees: "all events", "no events", or the sources, types
 * and producers of its scope (the full list in the title). It reads the request's scope (set once
 * per request in app.tsx) from Hono's context storage, as the viewer header reads the viewer, so
 * no page has to pass it down.
 */
import type { ReadScope } from '@event-observatory/store';
import { tryGetContext } from 'hono/context-storage';
import type { SearchEnv } from '../viewer.js';

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
  const scope = tryGetContext<SearchEnv>()?.get('scope');
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
