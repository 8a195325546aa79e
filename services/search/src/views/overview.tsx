/** @jsxRuntime automatic @jsxImportSource hono/jsx */
/** `GET /`: volume over time, top types, top sources and severities from the hourly rollup. */
import { type RollupCount, severityName } from '@event-observatory/store';
import type { Child } from 'hono/jsx';
import type { OverviewView, RangeName } from '../overview.js';
import { RANGES } from '../overview.js';
import { Layout, number, utc } from './layout.js';

interface BarRow {
  label: Child;
  /** The first number also sets the bar. */
  numbers: number[];
  barLabel: string;
}

/** A table of counts with a `<meter>` bar per row, scaled to the largest first number. */
function BarTable(props: {
  id: string;
  title: string;
  first: string;
  numbers: string[];
  bar: string;
  rows: BarRow[];
}) {
  const max = Math.max(1, ...props.rows.map((r) => r.numbers[0] ?? 0));
  return (
    <section aria-labelledby={props.id}>
      <h2 id={props.id}>{props.title}</h2>
      {props.rows.length === 0 ? (
        <p>No events in this range.</p>
      ) : (
        <div class="scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">{props.first}</th>
                {props.numbers.map((n) => (
                  <th scope="col" class="num">
                    {n}
                  </th>
                ))}
                <th scope="col">
                  <span class="hint">{props.bar}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {props.rows.map((r) => (
                <tr>
                  <td class="wrap">{r.label}</td>
                  {r.numbers.map((n) => (
                    <td class="num">{number.format(n)}</td>
                  ))}
                  <td>
                    <meter min={0} max={max} value={r.numbers[0] ?? 0} aria-label={r.barLabel} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function Top(props: { title: string; id: string; param: 'type' | 'source'; rows: RollupCount[] }) {
  return (
    <BarTable
      id={props.id}
      title={props.title}
      first={props.param === 'type' ? 'Type' : 'Source'}
      numbers={['Events']}
      bar="Share of the largest"
      rows={props.rows.map((r) => ({
        label: <a href={`/events?${new URLSearchParams({ [props.param]: r.value })}`}>{r.value}</a>,
        numbers: [r.events],
        barLabel: `${r.value}: ${number.format(r.events)} events`,
      }))}
    />
  );
}

export function OverviewPage(props: { view: OverviewView }) {
  const v = props.view;
  const s = v.severities;
  return (
    <Layout title="Overview" current="overview">
      <h1>Overview</h1>
      <form method="get" action="/" class="filters">
        <div>
          <label for="range">Time range</label>
          <select id="range" name="range">
            {(Object.keys(RANGES) as RangeName[]).map((r) => (
              <option value={r} selected={r === v.range}>
                Last {r}
              </option>
            ))}
          </select>
        </div>
        <div>
          <button type="submit">Show</button>
        </div>
      </form>
      <p class="hint">
        From the hourly rollup since {utc(v.since, false)} UTC.{' '}
        {s.refreshedAt
          ? `Last refreshed ${utc(s.refreshedAt, false)} UTC.`
          : 'The rollup has not been refreshed yet (the rollup-refresh job has not run).'}
      </p>
      {v.backlog.rows > 0 ? (
        <p class="notice" role="status">
          {v.backlog.capped ? 'More than ' : ''}
          {number.format(v.backlog.rows)} event(s) stored since the last refresh are not counted here yet:{' '}
          <a href="/events?range=24h">Search</a> lists them.
        </p>
      ) : null}
      <section aria-labelledby="severities" class="cards">
        <h2 id="severities">Severities</h2>
        <div class="card">
          Events <strong>{number.format(s.events)}</strong>
        </div>
        <div class="card">
          Error or worse <strong>{number.format(s.errors)}</strong>
        </div>
        {s.groupsByMaxRank.map((g) => (
          <div class="card">
            Hour, type and source groups whose worst event is{' '}
            {g.rank === null ? 'unrated' : (severityName(g.rank) ?? `rank ${g.rank}`)}
            <strong>{number.format(g.groups)}</strong>
          </div>
        ))}
      </section>
      <BarTable
        id="volume"
        title={`Volume per ${v.unit}`}
        first={`${v.unit === 'hour' ? 'Hour' : 'Day'} (UTC)`}
        numbers={['Events', 'Errors']}
        bar="Volume"
        rows={v.volume.map((b) => ({
          label: v.unit === 'hour' ? utc(b.start, false).slice(0, 16) : utc(b.start).slice(0, 10),
          numbers: [b.events, b.errors],
          barLabel: `${number.format(b.events)} events`,
        }))}
      />
      <div class="cards">
        <Top title="Top types" id="top-types" param="type" rows={v.types} />
        <Top title="Top sources" id="top-sources" param="source" rows={v.sources} />
      </div>
    </Layout>
  );
}
