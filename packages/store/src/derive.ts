/**
 * Derived columns that the writer fills: `device_id` and `tags` of `events.cloud_event`.
 * The same rules as the SQL functions `events.device_id_of` and `events.tags_of` (migration 0004),
 * which stay for backfills; a test checks both agree. Only string values count.
 *
 * @example
 * deviceIdOf({ deviceid: ' pump-3 ' }, null); // 'pump-3'
 * tagsOf({ tags: 'b, a' }, { tags: ['c', 7] }); // ['a', 'b', 'c']
 */
type Json = unknown;

const isObject = (v: Json): v is Record<string, Json> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** PostgreSQL's btrim(text): strips spaces only (not tabs or newlines). */
export const btrim = (s: string): string => s.replace(/^ +| +$/g, '');

const nonBlank = (v: Json): string | undefined => {
  if (typeof v !== 'string') return undefined;
  const t = btrim(v);
  return t === '' ? undefined : t;
};

/**
 * Device id: extension `deviceid`; else `data.deviceId`, `data.device_id`, `data.device.id`
 * (string values, trimmed, blanks skipped). Never the subject.
 */
export function deviceIdOf(extensions: Readonly<Record<string, string>>, data: Json): string | null {
  const ext = nonBlank(extensions.deviceid);
  if (ext !== undefined) return ext;
  if (!isObject(data)) return null;
  return (
    nonBlank(data.deviceId) ??
    nonBlank(data.device_id) ??
    (isObject(data.device) ? nonBlank(data.device.id) : undefined) ??
    null
  );
}

/**
 * Tags: extension `tags` split on commas, plus the string elements of `data.tags` when it is an
 * array; trimmed, blanks dropped, de-duplicated, sorted by code point.
 */
export function tagsOf(extensions: Readonly<Record<string, string>>, data: Json): string[] {
  const out = new Set<string>();
  const add = (v: string) => {
    const t = btrim(v);
    if (t !== '') out.add(t);
  };
  if (typeof extensions.tags === 'string') for (const part of extensions.tags.split(',')) add(part);
  if (isObject(data) && Array.isArray(data.tags)) {
    for (const e of data.tags) if (typeof e === 'string') add(e);
  }
  return [...out].sort(compareCodePoints);
}

function compareCodePoints(a: string, b: string): number {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return Buffer.compare(x, y);
}
