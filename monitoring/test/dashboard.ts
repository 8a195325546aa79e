/** The Event observatory dashboard's JSON, read as the test needs it. */
import { readFileSync } from 'node:fs';

export interface Panel {
  id: number;
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: { refId: string; expr: string; datasource?: { uid: string } }[];
  fieldConfig?: { defaults: { unit?: string; thresholds?: { steps: { value: number | null }[] } } };
}

export interface Dashboard {
  title: string;
  uid: string;
  templating: { list: { name: string; type: string; query: string | { query: string }; regex?: string }[] };
  panels: Panel[];
}

export const dashboard = JSON.parse(
  readFileSync(new URL('../dashboards/event-observatory.json', import.meta.url), 'utf8'),
) as Dashboard;

/** The panels under each row, in order. */
export function rows(): { title: string; panels: Panel[] }[] {
  const out: { title: string; panels: Panel[] }[] = [];
  for (const p of dashboard.panels) {
    if (p.type === 'row') out.push({ title: p.title, panels: [] });
    else out.at(-1)?.panels.push(p);
  }
  return out;
}

/** Grafana's reference to the release variable. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's syntax, not a template literal
export const RELEASE_VARIABLE = '${release}';

/**
 * A panel query as Prometheus receives it from Grafana: the interval macros replaced by the values
 * Grafana would put there for a 1-hour range at a 15 s scrape interval, and the namespace and
 * release variables by those of a release `obs` in `observatory`.
 */
export function asPromQL(expr: string): string {
  return expr
    .replaceAll('$namespace', 'observatory')
    .replaceAll(RELEASE_VARIABLE, 'obs-')
    .replaceAll('$__rate_interval', '1m')
    .replaceAll('$__range', '1h')
    .replaceAll('$__interval', '15s');
}
