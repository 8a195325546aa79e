/** @jsxRuntime automatic @jsxImportSource hono/jsx */
/**
 * The results table's settings: the columns (attributes as checkboxes, payload paths and
 * extensions as fields), the order and the time zone. A plain GET form behind a `<details>`, so it
 * works without JavaScript; it carries every other parameter of the page (not the cursor: a new
 * order or new columns start at the first page).
 */
import { ATTRIBUTE_COLUMNS, type AttributeColumn, DEFAULT_COLUMNS } from '../columns.js';
import type { ParsedSearch } from '../filters.js';
import { HiddenFields } from './layout.js';

/** The parameters this form sets itself; it carries every other one (`refresh` too). */
const OWN_PARAMS = ['sort', 'col', 'tz'];

export function TableSettings(props: { params: URLSearchParams; parsed: ParsedSearch | undefined }) {
  const p = props.params;
  const columns = props.parsed?.columns.map((c) => c.name) ?? [...DEFAULT_COLUMNS];
  const fields = columns.filter((name) => /^(data|ext)\./.test(name));
  const sort = props.parsed?.sort ?? 'newest';
  const timeZone = props.parsed?.timeZone ?? 'utc';
  const kept = [...new Set(p.keys())].filter((name) => name !== 'cursor' && !OWN_PARAMS.includes(name));
  const choosable = (Object.keys(ATTRIBUTE_COLUMNS) as AttributeColumn[]).filter((name) => name !== 'time');
  return (
    <details class="table-settings">
      <summary>Columns, order and time zone</summary>
      <form method="get" action="/events" aria-label="Table settings">
        <HiddenFields params={p} names={kept} />
        {/* The time is always the first column; naming it makes an empty choice mean "time only". */}
        <input type="hidden" name="col" value="time" />
        <fieldset>
          <legend>Columns (the time always comes first)</legend>
          <div class="choices">
            {choosable.map((name) => (
              <label>
                <input type="checkbox" name="col" value={name} checked={columns.includes(name)} />{' '}
                {name === 'summary' ? 'Payload (one line)' : ATTRIBUTE_COLUMNS[name]}
                {/* Named apart from the filter fields of the same words ("Type column", not "Type"). */}
                <span class="visually-hidden"> column</span>
              </label>
            ))}
          </div>
          {[...fields, ''].map((value, i) => (
            <div>
              <label for={`f-col-${i}`}>Payload or extension column{i > 0 ? ` (${i + 1})` : ''}</label>
              <input id={`f-col-${i}`} name="col" type="text" value={value} aria-describedby="f-col-hint" />
            </div>
          ))}
          <span id="f-col-hint" class="hint">
            data. and a payload path, e.g. data.device.id; or ext. and an extension name, e.g. ext.region
          </span>
        </fieldset>
        <div class="settings-row">
          <div>
            <label for="f-sort">Order</label>
            <select id="f-sort" name="sort">
              <option value="newest" selected={sort === 'newest'}>
                Newest first
              </option>
              <option value="oldest" selected={sort === 'oldest'}>
                Oldest first
              </option>
            </select>
          </div>
          <div>
            <label for="f-tz">Times in</label>
            <select id="f-tz" name="tz">
              <option value="utc" selected={timeZone === 'utc'}>
                UTC
              </option>
              <option value="browser" selected={timeZone === 'browser'}>
                Your browser's time zone
              </option>
            </select>
          </div>
        </div>
        <button type="submit">Apply</button>
      </form>
    </details>
  );
}
