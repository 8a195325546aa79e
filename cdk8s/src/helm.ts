/**
 * The bridge from cdk8s's static objects to Helm templates. A construct puts a placeholder where an
 * operator's value belongs (`value('ingest.replicas')`, `block('ingest.resources')`, ...); the
 * placeholder is a plain token string, so the typed API classes accept it and the YAML writer leaves
 * it alone. `toTemplate` then escapes every literal `{{` (Prometheus annotations) and swaps each
 * token for its template text. Objects can be made conditional (`onlyIf`).
 */
import { ApiObject } from 'cdk8s';
import type { IConstruct } from 'constructs';
import { stringify } from 'yaml';

type Kind = 'scalar' | 'text' | 'block' | 'spread' | 'items';
const registry: { kind: Kind; template: string }[] = [];
const conditions = new WeakMap<ApiObject, string>();
const overlays = new WeakMap<ApiObject, Record<string, string>>();

function token(kind: Kind, template: string): string {
  registry.push({ kind, template });
  return `HELM_${kind.toUpperCase()}_${registry.length - 1}`;
}

/**
 * A value from values.yaml in a scalar field: strings are quoted by Helm, numbers and booleans are
 * written as they are. Typed as `T` so it fits the field of the API class it is put in.
 */
export function value<T = string>(path: string): T {
  return scalar<T>(`{{ .Values.${path} | toJson }}`);
}

/** A value from values.yaml as a string (ConfigMap data, env values), whatever its type. */
export function valueText(path: string): string {
  return scalar(`{{ .Values.${path} | toString | toJson }}`);
}

/** Any template text that writes one YAML scalar by itself (quoted if it is a string). */
export function scalar<T = string>(template: string): T {
  return token('scalar', template) as T;
}

/** Template text inside a string field, e.g. `text('{{ .Release.Name }}-ingest')`: written quoted. */
export function text(template: string): string {
  // Written between double quotes, which Helm's template syntax would then have to escape.
  if (template.includes('"')) throw new Error(`text() takes no double quotes; use scalar(): ${template}`);
  return token('text', template);
}

/**
 * Whole maps or lists from values.yaml (resources, nodeSelector, tolerations) written with `toYaml`
 * at JSON pointers of the object's output (`/spec/template/spec/tolerations`). They are placed after
 * the typed API class has converted its fields, which would take a placeholder apart.
 */
export function blocks(object: ApiObject, at: Record<string, string>): void {
  overlays.set(object, { ...overlays.get(object), ...at });
}

/**
 * A template expression's map merged into the object at `pointer`, or its list appended to the
 * array there, after the typed API class has converted it (a field set only under a condition:
 * `replicas` without an HPA; an operator's extra env items).
 */
export function spreadAt(object: ApiObject, pointer: string, expression: string): void {
  spreads.set(object, [...(spreads.get(object) ?? []), [pointer, expression]]);
}
const spreads = new WeakMap<ApiObject, [string, string][]>();

function place(json: Record<string, unknown>, pointer: string, expression: string): void {
  const keys = pointer.split('/').slice(1);
  const last = keys.pop() as string;
  let node: Record<string, unknown> = json;
  for (const key of keys) {
    node[key] ??= {};
    node = node[key] as Record<string, unknown>;
  }
  node[last] = token('block', expression);
}

/**
 * Entries merged into a map from values.yaml (extra labels and annotations): use as a key,
 * `{ ...fixed, [spread('commonLabels')]: '' }`.
 */
export function spread(expression: string): string {
  return token('spread', expression);
}

/**
 * The release's resource name of a component: `<prefix>-<name>`, the prefix (`observatory.prefix`
 * in _names.tpl: the release name, or fullnameOverride / nameOverride) cut so the whole name fits
 * `max` characters (63, a DNS label; a CronJob's 52, as its Jobs append 11). See chart-templates.ts.
 */
export function releaseName(name: string, max = 63): string {
  return scalar(`{{ ${releaseNameExpr(name, max)} | toJson }}`);
}

/** Template text of the same name (inside a longer template expression). */
export function releaseNameExpr(name: string, max = 63): string {
  return `(printf "%s-${name}" (include "observatory.prefix" (list $ ${max - name.length - 1})))`;
}

/** Renders the objects of `scope` only when the Helm condition holds (`.Values.monitoring.dashboard`). */
export function onlyIf(scope: IConstruct, condition: string): void {
  for (const child of scope.node.findAll()) {
    if (child instanceof ApiObject) conditions.set(child, condition);
  }
}

const ranges = new WeakMap<ApiObject, [string, string]>();

/**
 * Renders the objects of `scope` once per item of the Helm list `list`, the item in `variable`
 * (`$namespace`, usable in `text()`); `.` stays the chart's root inside, so values still resolve.
 */
export function forEach(scope: IConstruct, variable: string, list: string): void {
  for (const child of scope.node.findAll()) {
    if (child instanceof ApiObject) ranges.set(child, [variable, list]);
  }
}

const template = (n: string) => (registry[Number(n)] as { template: string }).template;

const escapeBraces = (yaml: string) => yaml.replace(/\{\{(.*?)\}\}/g, (m) => `{{\`${m}\`}}`);

/** One object as a Helm template file's text. */
export function toTemplate(object: ApiObject): string {
  const json = object.toJson();
  for (const [pointer, expression] of Object.entries(overlays.get(object) ?? {}))
    place(json, pointer, expression);
  for (const [pointer, expression] of spreads.get(object) ?? []) {
    let node = json;
    for (const key of pointer.split('/').slice(1)) node = node[key] as Record<string, unknown>;
    if (Array.isArray(node)) node.push(token('items', expression));
    else node[token('spread', expression)] = '';
  }
  let yaml = escapeBraces(stringify(json, { lineWidth: 0 }));
  yaml = yaml.replace(/^( *)(- )?([^\s:]+): HELM_BLOCK_(\d+)$/gm, (_m, indent: string, dash, key, n) => {
    const lead = `${indent}${dash ?? ''}`;
    const width = lead.length + 2;
    return `${lead}${key}:\n${' '.repeat(width)}{{- toYaml ${template(n)} | nindent ${width} }}`;
  });
  yaml = yaml.replace(/^( *)HELM_SPREAD_(\d+): ""$/gm, (_m, indent: string, n) =>
    [`{{- with ${template(n)} }}`, `{{- toYaml . | nindent ${indent.length} }}`, '{{- end }}']
      .map((line) => `${indent}${line}`)
      .join('\n'),
  );
  yaml = yaml.replace(/^( *)- HELM_ITEMS_(\d+)$/gm, (_m, indent: string, n) =>
    [`{{- with ${template(n)} }}`, `{{- toYaml . | nindent ${indent.length} }}`, '{{- end }}']
      .map((line) => `${indent}${line}`)
      .join('\n'),
  );
  yaml = yaml.replace(/HELM_(SCALAR|TEXT)_(\d+)/g, (_m, kind, n) =>
    kind === 'TEXT' ? `"${template(n)}"` : template(n),
  );
  const range = ranges.get(object);
  if (range)
    yaml = `{{- range ${range[0]} := ${range[1]} }}\n{{- with $ }}\n---\n${yaml}{{- end }}\n{{- end }}\n`;
  const condition = conditions.get(object);
  return condition ? `{{- if ${condition} }}\n${yaml}{{- end }}\n` : yaml;
}
