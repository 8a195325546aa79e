/**
 * The histogram's chart: uPlot (npm `uplot`, MIT, no dependencies, about 50 KB minified) and its
 * style sheet, read once from the installed package and served by this service as same-origin
 * files (so the pages keep `script-src 'self'`), and the script that draws the histogram with it.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const resolve = createRequire(import.meta.url).resolve;
export const UPLOT_SCRIPT = readFileSync(resolve('uplot/dist/uPlot.iife.min.js'), 'utf8');
export const UPLOT_STYLESHEET = readFileSync(resolve('uplot/dist/uPlot.min.css'), 'utf8');

/**
 * Draws the histogram of the search page from its `data-chart` counts (histogram.tsx) and hides
 * the server's SVG. Bars are stacked by drawing running sums tallest first (each later series
 * covers the lower part of the one before). A click zooms into that bar's bucket, a drag across
 * bars into the buckets it touches: both load the search with absolute `from`/`to`, snapped to
 * bucket edges. Times on the axis are UTC (`MM-DD hh:mm`), like the rest of the UI. Without uPlot (the script
 * failed to load) nothing changes and the SVG stays.
 */
export const HISTOGRAM_SCRIPT = `
(() => {
  const box = document.querySelector('.histogram [data-chart]');
  if (!box || typeof uPlot !== 'function') return;
  const d = JSON.parse(box.dataset.chart);
  if (!d.starts.length) return;
  const section = box.closest('.histogram');
  const css = getComputedStyle(document.documentElement);
  const fg = css.getPropertyValue('--fg').trim(), line = css.getPropertyValue('--line').trim();
  const first = d.starts[0], end = d.starts[d.starts.length - 1] + d.bucketMs;
  const warningUp = d.severe.map((v, i) => v + d.warning[i]);
  const all = warningUp.map((v, i) => v + d.other[i]);
  const bucketAt = (px) => Math.floor((chart.posToVal(px, 'x') * 1000 - first) / d.bucketMs);
  const edge = (px, up) => {
    const k = (chart.posToVal(px, 'x') * 1000 - first) / d.bucketMs;
    return first + Math.max(0, Math.min(d.starts.length, up ? Math.ceil(k) : Math.floor(k))) * d.bucketMs;
  };
  let zooming = false;
  const go = (from, to) => {
    zooming = true;
    const url = new URL(d.zoom, location.href);
    url.searchParams.set('from', new Date(from).toISOString());
    url.searchParams.set('to', new Date(Math.max(to, from + d.bucketMs)).toISOString());
    location.assign(url.pathname + url.search);
  };
  const readout = document.createElement('p');
  readout.className = 'hint h-readout';
  readout.setAttribute('aria-hidden', 'true');
  const say = (u) => {
    const i = u.cursor.left >= 0 ? bucketAt(u.cursor.left) : -1;
    readout.textContent = i >= 0 && i < d.starts.length
      ? new Date(d.starts[i]).toISOString().slice(0, 19).replace('T', ' ') + ' UTC: ' + all[i] + ' events ('
        + d.severe[i] + ' error and above, ' + d.warning[i] + ' warning, ' + d.other[i] + ' below warning)'
      : '\\u00a0';
  };
  const bars = uPlot.paths.bars({ align: 1, size: [0.8, Infinity] });
  const level = (label, colour) => ({ label, fill: colour, stroke: colour, width: 0, paths: bars, points: { show: false } });
  const axis = { stroke: fg, grid: { stroke: line, width: 1 }, ticks: { stroke: line, width: 1 } };
  const utc = (t) => { const iso = new Date(t * 1000).toISOString(); return iso.slice(5, 10) + ' ' + iso.slice(11, 16); };
  // Short, so the results start on the first screen; one-line axis labels leave the bars the height.
  const HEIGHT = 130;
  const chart = new uPlot({
    width: box.clientWidth,
    height: HEIGHT,
    // Ticks fall on UTC hours and days, like the labels.
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    legend: { show: false },
    cursor: { drag: { x: true, y: false, setScale: false, dist: 5 }, points: { show: false } },
    scales: {
      x: { time: true, range: () => [first / 1000, end / 1000] },
      y: { range: (u, min, max) => [0, Math.max(1, max)] },
    },
    axes: [
      { ...axis, space: 100, size: 30, values: (u, ticks) => ticks.map(utc) },
      { ...axis, size: 56, values: (u, ticks) => ticks.map((v) => (Number.isInteger(v) ? v : '')) },
    ],
    series: [{}, level('below warning', '#0a4ea3'), level('warning', '#b35900'), level('error and above', '#a4161a')],
    hooks: {
      setSelect: [(u) => { if (u.select.width > 0) go(edge(u.select.left, false), edge(u.select.left + u.select.width, true)); }],
      setCursor: [say],
    },
  }, [d.starts.map((t) => t / 1000), all, warningUp, d.severe], box);
  chart.over.addEventListener('click', () => {
    const i = bucketAt(chart.cursor.left);
    if (!zooming && i >= 0 && i < d.starts.length) go(d.starts[i], d.starts[i] + d.bucketMs);
  });
  // In the line under the chart, before the table's fold (which takes a line of its own when open).
  section.querySelector('.h-foot > details').before(readout);
  say(chart);
  section.classList.add('charted');
  section.querySelector('[data-zoom-hint]').textContent = 'select a bar, or drag across several, to zoom';
  new ResizeObserver(() => chart.setSize({ width: box.clientWidth, height: HEIGHT })).observe(box);
})();
`;
