/** @jsxRuntime automatic @jsxImportSource hono/jsx */
/**
 * The search's active filters as pills at the top of the page: each a link that removes it and
 * one that switches it off or on (filter-pills.ts). Plain links: no script needed.
 */
import { activeFilters } from '../filter-pills.js';

export function FilterPills(props: { params: URLSearchParams }) {
  const pills = activeFilters(props.params);
  if (pills.length === 0) return null;
  return (
    <section class="pills" aria-labelledby="pills-title">
      <h2 id="pills-title" class="hint">
        Active filters
      </h2>
      <ul>
        {pills.map((p) => (
          <li class={p.disabled ? 'pill off' : 'pill'}>
            {p.disabled ? <s class="wrap">{p.label}</s> : <span class="wrap">{p.label}</span>}
            {p.disabled ? <span class="hint"> (off)</span> : null}{' '}
            <a href={p.toggle} aria-label={`${p.disabled ? 'Enable' : 'Disable'} ${p.label}`}>
              {p.disabled ? 'enable' : 'disable'}
            </a>{' '}
            <a href={p.remove} aria-label={`Remove ${p.label}`}>
              remove
            </a>
          </li>
        ))}
      </ul>
    </section>
  );
}
