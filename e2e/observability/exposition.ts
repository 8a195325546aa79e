/** A Prometheus text exposition read into families: type, and samples with their labels. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  type: string;
  samples: Sample[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
const SUFFIXES = ['_bucket', '_count', '_sum'];

/** Families by name (`# TYPE`); a sample joins its family by name or by name minus a histogram/summary suffix. */
export function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) {
      families.set(type[1]!, { type: type[2]!, samples: [] });
      continue;
    }
    const m = SAMPLE.exec(line);
    if (!m || line.startsWith('#')) continue;
    const [, name, rawLabels, value] = m as unknown as [string, string, string | undefined, string];
    const labels = Object.fromEntries([...(rawLabels ?? '').matchAll(LABEL)].map((l) => [l[1]!, l[2]!]));
    const owner =
      families.get(name) ??
      SUFFIXES.filter((s) => name.endsWith(s))
        .map((s) => families.get(name.slice(0, -s.length)))
        .find(Boolean);
    owner?.samples.push({ name, labels, value: Number(value) });
  }
  return families;
}

/** Tag names of a family's samples, without the common tags and `le`/`quantile`. */
export function tagNames(family: Family): string[] {
  const names = new Set<string>();
  for (const s of family.samples)
    for (const k of Object.keys(s.labels))
      if (!['service', 'version', 'le', 'quantile'].includes(k)) names.add(k);
  return [...names].sort();
}
