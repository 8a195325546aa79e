/** @jsxRuntime automatic @jsxImportSource hono/jsx */
/**
 * The histogram above the results, one bar per bucket stacked by severity level. With JavaScript,
 * `/assets/histogram.js` draws it with uPlot (served by this service) from the counts in the
 * `data-chart` attribute: click a bar or drag across several to zoom (absolute `from`/`to` in the
 * URL). Without it, the SVG drawn here shows, each bar a link that zooms into its bucket. The
 * same counts as a table in a disclosure: the accessible form (the chart is hidden from assistive
 * technology, the SVG's links out of the tab order).
 */
import type { Histogram, HistogramBucket } from '@event-observatory/store';
import type { Failure } from '../failures.js';
import { number, utc } from './layout.js';

const LEVELS = [
  { key: 'other', label: 'below warning' },
  { key: 'warning', label: 'warning' },
  { key: 'severe', label: 'error and above' },
] as const;
const BAR = 10;
const HEIGHT = 100;

/** The search without its time range and cursor: a zoom adds its own `from` and `to`. */
function zoomBase(params: URLSearchParams): URLSearchParams {
  const next = new URLSearchParams(params);
  for (const name of ['cursor', 'range', 'from', 'to']) next.delete(name);
  return next;
}

/** The search narrowed to one bucket: its start and end replace the range; the cursor goes. */
export function zoomHref(params: URLSearchParams, start: Date, bucketMs: number): string {
  const next = zoomBase(params);
  next.set('from', start.toISOString());
  next.set('to', new Date(start.getTime() + bucketMs).toISOString());
  return `/events?${next}`;
}

/** What the chart script draws: bucket starts (ms) and counts per level, oldest first. */
function chartData(h: Histogram, params: URLSearchParams): string {
  return JSON.stringify({
    zoom: `/events?${zoomBase(params)}`,
    bucketMs: h.bucketMs,
    starts: h.buckets.map((b) => b.start.getTime()),
    ...Object.fromEntries(LEVELS.map((l) => [l.key, h.buckets.map((b) => b[l.key])])),
  });
}

const totalOf = (b: HistogramBucket) => b.severe + b.warning + b.other;

function duration(ms: number): string {
  const s = ms / 1000;
  if (s % 86_400 === 0) return `${s / 86_400} d`;
  if (s % 3_600 === 0) return `${s / 3_600} h`;
  if (s % 60 === 0) return `${s / 60} min`;
  return `${s} s`;
}

export function HistogramPanel(props: {
  histogram: Histogram | Failure | undefined;
  params: URLSearchParams;
}) {
  const h = props.histogram;
  if (h === undefined) return null;
  if ('message' in h)
    return (
      <section aria-labelledby="histogram">
        <h2 id="histogram">Events over time</h2>
        <p>Histogram unavailable ({h.title.toLowerCase()}).</p>
      </section>
    );
  const max = Math.max(1, ...h.buckets.map(totalOf));
  const all = h.buckets.reduce((n, b) => n + totalOf(b), 0);
  const first = h.buckets[0];
  const last = h.buckets.at(-1);
  return (
    <section aria-labelledby="histogram" class="histogram">
      <div class="h-head">
        <h2 id="histogram">Events over time</h2>
        <p class="hint">
          {h.source === 'sample' ? 'About ' : ''}
          {number.format(all)} events, one bar per {duration(h.bucketMs)}
          {h.source === 'rollup' ? ' (from the hourly rollup: whole hours, errors apart from the rest)' : ''}
          {h.source === 'sample'
            ? ` (estimated from a ${h.samplePercent ?? '?'} % sample of the range, scaled)`
            : ''}
          {'; '}
          <span data-zoom-hint>select a bar to zoom into it</span>.
        </p>
      </div>
      <div class="h-chart" data-chart={chartData(h, props.params)} aria-hidden="true" />
      <svg
        class="h-svg"
        viewBox={`0 0 ${h.buckets.length * BAR} ${HEIGHT}`}
        preserveAspectRatio="none"
        aria-hidden="true"
      >
        {h.buckets.map((b, i) => {
          let y = HEIGHT;
          return (
            <a
              href={zoomHref(props.params, b.start, h.bucketMs)}
              tabindex={-1}
              data-bucket={b.start.toISOString()}
            >
              <title>{`${utc(b.start, false)}: ${number.format(totalOf(b))} events`}</title>
              <rect class="h-bg" x={i * BAR} y="0" width={BAR} height={HEIGHT} />
              {LEVELS.map((level) => {
                const height = (b[level.key] / max) * HEIGHT;
                y -= height;
                return height > 0 ? (
                  <rect class={`h-${level.key}`} x={i * BAR + 1} y={y} width={BAR - 2} height={height} />
                ) : null;
              })}
            </a>
          );
        })}
      </svg>
      {/* One line under the chart: the span, the legend, the table's fold (and the chart's readout). */}
      <div class="h-foot">
        {first && last ? (
          <span class="hint">
            {utc(first.start, false)} to {utc(new Date(last.start.getTime() + h.bucketMs), false)} UTC
          </span>
        ) : null}
        <span class="legend hint">
          {LEVELS.map((l) => (
            <span>
              <span class={`swatch h-${l.key}`} aria-hidden="true" /> {l.label}{' '}
            </span>
          ))}
        </span>
        <details>
          <summary>Counts per {duration(h.bucketMs)} as a table</summary>
          <div class="scroll">
            <table>
              <thead>
                <tr class="hb">
                  <th scope="col">From (UTC)</th>
                  {LEVELS.map((l) => (
                    <th scope="col" class="num">
                      {l.label}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {h.buckets.map((b) => (
                  <tr class="hb">
                    <td>
                      <a href={zoomHref(props.params, b.start, h.bucketMs)}>{utc(b.start, false)}</a>
                    </td>
                    {LEVELS.map((l) => (
                      <td class="num">{number.format(b[l.key])}</td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </details>
      </div>
    </section>
  );
}
