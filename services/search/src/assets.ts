/**
 * The two static files of the UI, served from memory: the style sheet and the live tail's script.
 * Both are same-origin files so the pages can carry a strict Content-Security-Policy (no inline
 * script or style). Colours keep a contrast of at least 4.5:1 (WCAG AA) on their backgrounds.
 */
export const STYLESHEET = `
:root { color-scheme: light; --fg: #1a1a1a; --muted: #4a4a4a; --bg: #ffffff; --panel: #f3f4f6;
  --link: #0a4ea3; --focus: #b35900; --error: #a4161a; --line: #c8c8c8; --input: #ffffff; --button-fg: #ffffff; }
@media (prefers-color-scheme: dark) {
  :root { color-scheme: dark; --fg: #e8e8e8; --muted: #b8b8b8; --bg: #121417; --panel: #1f2329;
    --link: #8cc4ff; --focus: #ffb35c; --error: #ff8a8a; --line: #444b55; --input: #1a1d22; --button-fg: #0b1a2e; }
}
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--link); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, summary:focus-visible {
  outline: 3px solid var(--focus); outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: var(--bg); padding: .5rem; }
.skip:focus { left: .5rem; }
header { background: #12263f; color: #fff; padding: .75rem 1rem; display: flex; flex-wrap: wrap; gap: 1rem; align-items: baseline; }
header a { color: #fff; }
header .brand { font-weight: 700; margin-right: auto; }
header .viewer { display: flex; gap: .5rem; align-items: baseline; flex-wrap: wrap; }
header .viewer form { display: inline; }
main { padding: 1rem; margin: 0 auto; }
h1 { font-size: 1.5rem; margin: .25rem 0 1rem; }
h2 { font-size: 1.2rem; margin: 1.5rem 0 .5rem; }
form.filters { background: var(--panel); padding: 1rem; border-radius: .5rem; display: grid; gap: .75rem;
  grid-template-columns: repeat(auto-fit, minmax(14rem, 1fr)); }
form.filters .wide { grid-column: 1 / -1; }
label { display: block; font-weight: 600; }
.hint { color: var(--muted); font-size: .875rem; }
input, select, button { font: inherit; padding: .4rem .5rem; border: 1px solid #6b6b6b; border-radius: .25rem; width: 100%; background: var(--input); color: var(--fg); }
button { background: var(--link); color: var(--button-fg); border-color: var(--link); cursor: pointer; width: auto; padding: .5rem 1.25rem; }
tr.current { outline: 3px solid var(--focus); outline-offset: -3px; }
tr.anchor td { background: var(--panel); font-weight: 600; }
tr.anchor td:first-child { border-left: 4px solid var(--focus); }
.problems { border: 2px solid var(--error); color: var(--error); padding: .5rem 1rem; border-radius: .5rem; }
.notice { border-left: 4px solid var(--focus); background: var(--panel); padding: .5rem 1rem; margin-top: 1rem; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.wrap { overflow-wrap: anywhere; }
table.events td.time { white-space: nowrap; }
table.events td.cell { max-width: 16rem; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
/* The row's event shows under it while the toggle in its time cell is open: one line per row otherwise. */
table.events tr.expand { display: none; }
table.events tr.event td { padding-top: .15rem; padding-bottom: .15rem; }
table.events tr.event:has(details.toggle[open]) + tr.expand { display: table-row; }
table.events tr.event:has(details.toggle[open]) td { border-bottom: none; }
table.events tr.expand td { padding-top: 0; }
details.toggle { display: inline-block; margin-right: .35rem; }
details.toggle > summary { cursor: pointer; color: var(--muted); list-style-position: inside; }
table.values th, table.values td { overflow-wrap: anywhere; font-size: .875rem; }
table.values th { font-weight: 600; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
.table-settings form { background: var(--panel); padding: 1rem; border-radius: .5rem; display: grid; gap: .75rem; }
.table-settings fieldset { border: 1px solid var(--line); border-radius: .25rem; display: grid; gap: .5rem; min-width: 0; }
.choices { display: flex; flex-wrap: wrap; gap: .25rem 1.25rem; }
.choices label { display: inline-flex; align-items: center; gap: .35rem; font-weight: normal; }
.choices input { width: auto; }
.settings-row { display: flex; flex-wrap: wrap; gap: 1rem; }
meter { width: 100%; min-width: 6rem; }
nav.pages { display: flex; gap: 1.5rem; margin: 1rem 0; flex-wrap: wrap; }
.layout { display: grid; gap: 1.5rem; grid-template-columns: 1fr; }
/* A grid item is at least as wide as its content by default: the results table scrolls in its own box instead. */
.layout > * { min-width: 0; }
@media (min-width: 60rem) { .layout { grid-template-columns: 3fr 1fr; } }
.cards { display: grid; gap: 1rem; grid-template-columns: repeat(auto-fit, minmax(12rem, 1fr)); }
.card { background: var(--panel); padding: .75rem 1rem; border-radius: .5rem; }
.cards h2 { grid-column: 1 / -1; margin-bottom: 0; }
.card strong { display: block; font-size: 1.5rem; }
pre { background: var(--panel); padding: 1rem; overflow-x: auto; border-radius: .5rem; white-space: pre-wrap; overflow-wrap: anywhere; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; }
dt { font-weight: 600; } dd { margin: 0; overflow-wrap: anywhere; }
ol.tail { padding-left: 1.25rem; }
ol.tail li.dropped { color: var(--error); font-weight: 600; }
ol.tail .future { color: var(--error); }
button.copy { padding: .1rem .5rem; font-size: .875rem; margin-left: .5rem; }
.filter-links { font-size: .875rem; white-space: nowrap; }
.filter-links a { margin-left: .5rem; }
ul.tree { list-style: none; padding-left: 1.25rem; margin: .25rem 0; font-family: ui-monospace, monospace; }
ul.tree .key { font-weight: 600; }
form.bar { margin-bottom: .5rem; }
section.pills { display: flex; flex-wrap: wrap; gap: .25rem .75rem; align-items: baseline; margin: 0 0 .5rem; }
section.pills h2 { margin: 0; font-weight: 600; }
section.pills ul { list-style: none; padding: 0; margin: 0; display: flex; flex-wrap: wrap; gap: .5rem; }
li.pill { border: 1px solid var(--line); background: var(--panel); border-radius: 1rem; padding: .15rem .75rem; overflow-wrap: anywhere; }
li.pill a { font-size: .875rem; margin-left: .35rem; }
li.pill.off { border-style: dashed; }
form.save-search { margin-bottom: 1rem; max-width: 36rem; }
ul.saved { list-style: none; padding: 0; }
ul.saved li { display: flex; flex-wrap: wrap; gap: .5rem; align-items: baseline; padding: .5rem 0; border-bottom: 1px solid var(--line); }
ul.saved form { display: flex; gap: .5rem; }
ul.saved form.rename { margin-left: auto; }
ul.saved form.rename input { width: 14rem; max-width: 100%; }
ul.facets { list-style: none; padding: 0; margin: 0; }
ul.facets li { display: flex; flex-wrap: wrap; gap: .4rem; align-items: baseline; padding: .15rem 0; }
/* A name keeps its line whole (the counts and links move under it when both do not fit); only a name
   wider than the whole line breaks, at its edge. */
ul.facets .name { flex: 1 1 auto; min-width: 0; overflow-wrap: break-word; }
ul.facets .counts { font-variant-numeric: tabular-nums; color: var(--muted); }
svg.share { width: 3rem; height: .5rem; align-self: center; border: 1px solid var(--muted); }
.share-bg { fill: var(--bg); } .share-fill { fill: var(--fg); }
.histogram.charted .h-svg { display: none; }
.h-chart .u-over { cursor: pointer; } .h-chart .u-select { background: rgba(128, 128, 128, .35); }
.histogram svg { display: block; width: 100%; height: 7.5rem; background: var(--panel); }
.h-bg { fill: transparent; } a:hover > .h-bg { fill: var(--line); }
.h-other { fill: #0a4ea3; } .h-warning { fill: #b35900; } .h-severe { fill: #a4161a; }
/* The histogram's heading and sentence on one line, and under the chart its span, legend and fold. */
.h-head, .h-foot { display: flex; flex-wrap: wrap; gap: 0 1.25rem; align-items: baseline; }
.h-head h2 { margin: .5rem 0 .25rem; }
.h-head p, .h-foot p { margin: 0; }
.h-foot { margin: .25rem 0; }
.h-foot > details > summary { cursor: pointer; }
.h-foot > details[open] { flex-basis: 100%; }
.h-foot > .h-readout { margin-left: auto; }
.swatch { display: inline-block; width: .8rem; height: .8rem; margin-left: .75rem; }
span.h-other { background: #0a4ea3; } span.h-warning { background: #b35900; } span.h-severe { background: #a4161a; }
.bar-row { display: flex; flex-wrap: wrap; gap: .5rem; }
.bar-row > input { flex: 1 1 16rem; width: auto; min-width: 0; }
.bar-row > select, .bar-row > button { flex: 0 0 auto; width: auto; }
details.filter-form[open], details.save-search[open] { flex-basis: 100%; }
details.filter-form > summary, details.save-search > summary, details.syntax > summary { cursor: pointer; }
.bar-row > details.syntax { align-self: center; }
details.syntax[open] { flex-basis: 100%; }
details.syntax p { margin: .25rem 0 0; }
.bar-row input { font-family: ui-monospace, monospace; }
/* One wrapping row: the time controls, the folded forms, the absolute link; an opened form takes a line. */
.toolbar { display: flex; flex-wrap: wrap; gap: .25rem 1.25rem; align-items: baseline; margin: 0 0 .5rem; }
.toolbar p { margin: 0; font-variant-numeric: tabular-nums; }
.toolbar nav.steps { display: flex; gap: .75rem; }
.toolbar form { display: flex; flex-wrap: wrap; gap: .35rem; align-items: baseline; }
.toolbar input, .toolbar select, .toolbar button { width: auto; }
/* Compact, so Auto-refresh and Set stay on one line of a phone. */
.toolbar select, .toolbar button { padding: .25rem .5rem; }
details.calendar > summary { cursor: pointer; }
/* Heading, total, exports, order and the table's settings on one line above the table. */
.results-head { display: flex; flex-wrap: wrap; gap: .25rem 1.25rem; align-items: baseline; margin: .5rem 0; }
.results-head h2, .results-head p { margin: 0; }
.results-head details[open] { flex-basis: 100%; }
.layout aside > h2:first-child { margin-top: .5rem; }
details.calendar[open] { flex-basis: 100%; }
pre.caret { margin: .25rem 0 0; padding: .25rem .5rem; white-space: pre; overflow-x: auto; font-family: ui-monospace, monospace; }
`;

/**
 * Live tail: opens the EventSource named by the section's data-stream attribute when the button
 * is pressed. Events wait in a queue drawn once per animation frame; a queue longer than 500
 * (a browser that cannot keep up) drops its oldest and says how many ("N dropped", a line where
 * the gap is). Pause keeps the stream and counts what arrives meanwhile; resume shows it. The list
 * keeps the newest 200 events.
 * Items are text only, so nothing from the store is parsed as HTML.
 */
export const TAIL_SCRIPT = `
(() => {
  const section = document.getElementById('tail-section');
  if (!section) return;
  const [button, pause] = section.querySelectorAll('button');
  const list = section.querySelector('ol');
  const status = section.querySelector('[data-status]');
  const SCROLLBACK = 200, QUEUE = 500;
  let source, queue = [], paused = false, dropped = 0, drawing = false;
  button.hidden = false;
  const say = () => {
    status.textContent = !source ? 'Live tail stopped.'
      : paused ? 'Paused: ' + queue.length + ' new event(s) waiting.'
      : 'Live tail running: new events appear below.';
  };
  const item = (e) => {
    const li = document.createElement('li');
    const link = document.createElement('a');
    link.href = e.href;
    link.textContent = e.time + ' ' + e.type;
    li.append(link, document.createTextNode(' ' + e.source + ' ' + e.id + (e.subject ? ' ' + e.subject : '') + (e.severity ? ' [' + e.severity + ']' : '')));
    if (e.future) {
      const mark = document.createElement('strong');
      mark.className = 'future';
      mark.textContent = ' from the future';
      mark.title = 'Its time is ahead of when it was stored (a producer clock ahead)';
      li.append(mark);
    }
    return li;
  };
  const draw = () => {
    drawing = false;
    if (paused) return say();
    const batch = queue.splice(0);
    // Only the newest SCROLLBACK of a batch could stay on the list: the older ones count as dropped.
    dropped += Math.max(0, batch.length - SCROLLBACK);
    if (dropped > 0) {
      const li = document.createElement('li');
      li.className = 'dropped';
      li.textContent = dropped + ' dropped (arriving faster than this page can show)';
      list.prepend(li);
      dropped = 0;
    }
    for (const e of batch.slice(-SCROLLBACK)) list.prepend(item(e));
    // Trim to SCROLLBACK events; markers do not count, so the newest one stays beside its gap.
    let events = list.querySelectorAll('li:not(.dropped)').length;
    while (events > SCROLLBACK) {
      if (!list.lastElementChild.classList.contains('dropped')) events--;
      list.lastElementChild.remove();
    }
    say();
  };
  const schedule = () => { if (!drawing) { drawing = true; requestAnimationFrame(draw); } };
  pause.addEventListener('click', () => {
    paused = !paused;
    pause.textContent = paused ? 'Resume' : 'Pause';
    pause.setAttribute('aria-pressed', String(paused));
    if (!paused) schedule();
    say();
  });
  const stop = () => {
    source.close();
    source = undefined;
    button.textContent = 'Start live tail';
    pause.hidden = true;
    say();
  };
  button.addEventListener('click', () => {
    if (source) return stop();
    source = new EventSource(section.dataset.stream);
    button.textContent = 'Stop live tail';
    pause.hidden = false;
    say();
    source.addEventListener('event', (message) => {
      queue.push(JSON.parse(message.data));
      if (queue.length > QUEUE) dropped += queue.splice(0, queue.length - QUEUE).length;
      if (paused) say(); else schedule();
    });
    // A stream that ended (its maximum age) reconnects by itself; a refused one (429) does not.
    source.addEventListener('error', () => {
      if (source.readyState !== EventSource.CLOSED) status.textContent = 'Live tail reconnecting...';
      else {
        stop();
        status.textContent = 'Live tail refused by the server (too many live tails open?); try again later.';
      }
    });
    source.addEventListener('open', say);
  });
})();
`;

/** Event detail and the results table's expand: shows the copy buttons and copies their `data-copy` text to the clipboard. */
export const DETAIL_SCRIPT = `
(() => {
  for (const button of document.querySelectorAll('button[data-copy]')) {
    button.hidden = false;
    button.addEventListener('click', async (event) => {
      event.preventDefault();
      try {
        await navigator.clipboard.writeText(button.dataset.copy);
        button.textContent = 'Copied';
      } catch {
        button.textContent = 'Copy failed';
      }
      setTimeout(() => { button.textContent = 'Copy'; }, 1500);
    });
  }
})();
`;

/**
 * The browser's time zone (`tz=browser`): inside an element marked `data-tz="browser"` every
 * `<time datetime>` (written in UTC by the server) is rewritten to the browser's zone, with its
 * offset (its title keeps the UTC time); a `[data-zone]` label takes its attribute's text; the
 * calendar's `datetime-local` fields show local time and send UTC. Again on each `results-reloaded`
 * event (`REFRESH_SCRIPT`) for the part replaced.
 */
export const TABLE_SCRIPT = `
(() => {
  const pad = (n, width = 2) => String(n).padStart(width, '0');
  const local = (d) => d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + 'T' +
    pad(d.getHours()) + ':' + pad(d.getMinutes()) + ':' + pad(d.getSeconds());
  const localize = (root) => {
    for (const time of root.querySelectorAll('[data-tz="browser"] time[datetime]')) {
      const d = new Date(time.dateTime);
      if (Number.isNaN(d.getTime())) continue;
      const minutes = -d.getTimezoneOffset();
      const offset = (minutes < 0 ? '-' : '+') + pad(Math.floor(Math.abs(minutes) / 60)) + ':' + pad(Math.abs(minutes) % 60);
      time.title = time.textContent + ' UTC';
      time.textContent = local(d).replace('T', ' ') + '.' + pad(d.getMilliseconds(), 3) + ' ' + offset;
    }
    for (const label of root.querySelectorAll('[data-tz="browser"] [data-zone]')) label.textContent = label.dataset.zone;
    for (const form of root.querySelectorAll('form[data-tz="browser"]')) {
      const fields = [...form.querySelectorAll('input[type="datetime-local"]')];
      for (const field of fields) {
        if (field.value) field.value = local(new Date(field.value + 'Z'));
      }
      form.addEventListener('submit', () => {
        for (const field of fields) {
          if (!field.value) continue;
          const utc = document.createElement('input');
          utc.type = 'hidden';
          utc.name = field.name;
          utc.value = new Date(field.value).toISOString();
          field.removeAttribute('name');
          form.append(utc);
        }
      });
    }
  };
  localize(document);
  document.addEventListener('results-reloaded', (event) => localize(event.target));
})();
`;

/**
 * Auto-refresh with JavaScript: every `data-refresh` seconds of the toolbar, the page's own URL is
 * read again and only its results section is replaced (the query bar, an open form, the scroll
 * position stay); nothing while the tab is hidden. Without JavaScript a `<noscript>` meta refresh
 * reloads the whole page instead.
 */
export const REFRESH_SCRIPT = `
(() => {
  const seconds = Number(document.querySelector('.toolbar[data-refresh]')?.dataset.refresh);
  if (!(seconds > 0)) return;
  const selector = 'section[aria-labelledby="results"]';
  const reload = async () => {
    if (document.hidden) return;
    try {
      const answer = await fetch(location.href, { credentials: 'same-origin' });
      if (!answer.ok) return;
      const fresh = new DOMParser().parseFromString(await answer.text(), 'text/html').querySelector(selector);
      const current = document.querySelector(selector);
      if (!fresh || !current) return;
      current.replaceWith(fresh);
      fresh.dispatchEvent(new Event('results-reloaded', { bubbles: true }));
    } catch {
      // The next period tries again.
    }
  };
  setInterval(reload, seconds * 1000);
})();
`;

/**
 * Keyboard shortcuts of the search page: '/' focuses the query bar, 'j' and 'k' move to the next
 * and previous result row (its link takes the focus, so Enter opens the event). Keys typed into a
 * field are left alone.
 */
export const KEYS_SCRIPT = `
(() => {
  const rows = () => [...document.querySelectorAll('section[aria-labelledby="results"] tbody tr.event')];
  let current = -1;
  const move = (step) => {
    const all = rows();
    if (!all.length) return;
    all[current]?.classList.remove('current');
    current = Math.max(0, Math.min(all.length - 1, current + step));
    all[current].classList.add('current');
    all[current].querySelector('a')?.focus();
  };
  document.addEventListener('keydown', (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.target.closest('input, select, textarea, [contenteditable]')) return;
    if (event.key === '/') { event.preventDefault(); document.getElementById('f-bar')?.focus(); }
    else if (event.key === 'j') move(1);
    else if (event.key === 'k') move(-1);
  });
})();
`;

/**
 * Autocomplete of the query bar with JavaScript: while typing (150 ms after the last key), the
 * line's completions from `/suggest` replace the options of its `<datalist>` (the page renders
 * the facets' names there for a browser without scripts). An answer to an older line is dropped.
 */
export const SUGGEST_SCRIPT = `
(() => {
  const bar = document.getElementById('f-bar');
  const list = document.getElementById('bar-suggestions');
  if (!bar || !list) return;
  let timer;
  let asked = '';
  bar.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const line = bar.value;
      asked = line;
      try {
        const answer = await fetch('/suggest?bar=' + encodeURIComponent(line), { credentials: 'same-origin' });
        if (!answer.ok || asked !== line) return;
        const { suggestions } = await answer.json();
        list.replaceChildren(...suggestions.map((value) => Object.assign(document.createElement('option'), { value })));
      } catch {
        // The rendered options stay.
      }
    }, 150);
  });
})();
`;
