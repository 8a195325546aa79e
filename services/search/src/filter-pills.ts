/**
 * The active filters of a search URL as pills: each filter parameter's value, removable (a link to
 * the same search without it) and disable-able (a link to the same search with it switched off).
 *
 * A disabled filter stays in the URL under its name prefixed `off_` (`off_type=com.a` is the filter
 * `type=com.a`, switched off): the search ignores it, the pill shows it struck through, and
 * enabling it moves it back. The time range is no pill: the time picker shows it, and a search
 * always has one.
 *
 * @example
 * activeFilters(new URLSearchParams('type=a&off_source=b'));
 * // [{ name: 'type', value: 'a', disabled: false, remove: '/events', toggle: '/events?off_type=a' }, …]
 */
import { FILTER_PARAMS, isDisabledFilter, OFF_PREFIX } from './filters.js';

/** Filters a pill shows: every filter parameter but the time range's. */
const PILL_PARAMS = FILTER_PARAMS.filter((name) => !['range', 'from', 'to'].includes(name));

/** What a pill calls each parameter. */
const LABELS: Record<string, string> = {
  q: 'text',
  query: 'query',
  payload: 'payload',
  ext: 'extension',
  severity: 'severity at least',
  has: 'has extension',
  not_has: 'not extension',
};

export interface FilterPill {
  /** The filter's parameter (without `off_`). */
  name: string;
  value: string;
  /** What the pill says: the parameter in words, then the value. */
  label: string;
  disabled: boolean;
  /** The same search without this filter. */
  remove: string;
  /** The same search with this filter switched off (or back on). */
  toggle: string;
}

/** The URL's disabled filters, as `[param, value]` pairs: what a form must carry along. */
export function disabledFilters(params: URLSearchParams): [string, string][] {
  return [...params].filter(([name]) => isDisabledFilter(name));
}

/** The link to `/events` with `params` less one `[name, value]`, plus `add` when given; no cursor. */
function searchWith(params: URLSearchParams, drop: [string, string], add?: [string, string]): string {
  const next = new URLSearchParams(params);
  next.delete('cursor');
  next.delete(...drop);
  if (add) next.append(...add);
  return next.size ? `/events?${next}` : '/events';
}

/** Every active and disabled filter of the URL, in its order. */
export function activeFilters(params: URLSearchParams): FilterPill[] {
  const pills: FilterPill[] = [];
  for (const [param, value] of params) {
    if (value.trim() === '') continue;
    const disabled = isDisabledFilter(param);
    const name = disabled ? param.slice(OFF_PREFIX.length) : param;
    if (!PILL_PARAMS.includes(name)) continue;
    const words = LABELS[name] ?? name.replace(/^not_/, 'not ');
    pills.push({
      name,
      value,
      label: `${words}: ${value}`,
      disabled,
      remove: searchWith(params, [param, value]),
      toggle: searchWith(params, [param, value], [disabled ? name : `${OFF_PREFIX}${name}`, value]),
    });
  }
  return pills;
}
