/** `GET /`: volume over time, top types, top sources and severities from the hourly rollup. */
import { severityName } from '@event-observatory/store';
import type { OverviewView, RangeName } from '../overview.js';
import { RANGES } from '../overview.js';
import { Layout, number, utc } from './layout.js';

function Top(props: { title: string; id: string; param: string; rows: { value: string; events: number }[] }) {
  const max = Math.max(1, ...props.rows.map((r) => r.events));
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
                <th scope="col">{props.param === 'type' ? 'Type' : 'Source'}</th>
                <th scope="col" class="num">
                  Events
                </th>
                <th scope="col">
                  <span class="hint">Share of the largest</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {props.rows.map((r) => (
                <tr>
                  <td class="wrap">
                    <a href={`/events?${new URLSearchParams({ [props.param]: r.value })}`}>{r.value}</a>
                  </td>
                  <td class="num">{number.format(r.events)}</td>
                  <td>
                    <meter
                      min={0}
                      max={max}
                      value={r.events}
                      aria-label={`${r.value}: ${number.format(r.events)} events`}
                    />
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

export function OverviewPage(props: { view: OverviewView }) {
  const v = props.view;
  const max = Math.max(1, ...v.volume.map((b) => b.events));
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
          : 'The rollup is empty: it has not been refreshed yet.'}
      </p>
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
      <section aria-labelledby="volume">
        <h2 id="volume">Volume per {v.unit}</h2>
        {v.volume.length === 0 ? (
          <p>No events in this range.</p>
        ) : (
          <div class="scroll">
            <table>
              <thead>
                <tr>
                  <th scope="col">{v.unit === 'hour' ? 'Hour' : 'Day'} (UTC)</th>
                  <th scope="col" class="num">
                    Events
                  </th>
                  <th scope="col" class="num">
                    Errors
                  </th>
                  <th scope="col">
                    <span class="hint">Volume</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {v.volume.map((b) => (
                  <tr>
                    <td>
                      {v.unit === 'hour' ? utc(b.start, false).slice(0, 16) : utc(b.start).slice(0, 10)}
                    </td>
                    <td class="num">{number.format(b.events)}</td>
                    <td class="num">{number.format(b.errors)}</td>
                    <td>
                      <meter
                        min={0}
                        max={max}
                        value={b.events}
                        aria-label={`${number.format(b.events)} events`}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <div class="cards">
        <Top title="Top types" id="top-types" param="type" rows={v.types} />
        <Top title="Top sources" id="top-sources" param="source" rows={v.sources} />
      </div>
    </Layout>
  );
}
