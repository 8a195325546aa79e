/**
 * JSON decoding with a location: every failure names the JSON path of the offending value
 * (`$.head.repo_id`, `$[3].user.login`), so a bad payload can be reported without dumping it.
 */

/** One step of a JSON path: an object key or an array index. */
export type JsonPathSegment = string | number;

/**
 * Location of a value inside a JSON document. Immutable; two paths are equal when their segments
 * are (see {@link jsonPathEquals}); renders as `$`, `$.field`, `$.list[0].name`, `$["odd key"]`.
 */
export interface JsonPath {
  readonly segments: readonly JsonPathSegment[];
}

/** The document root, `$`. */
export const ROOT_PATH: JsonPath = Object.freeze({
  segments: Object.freeze([]) as readonly JsonPathSegment[],
});

/** The path one step below `path`. */
export function childPath(path: JsonPath, segment: JsonPathSegment): JsonPath {
  return Object.freeze({ segments: Object.freeze([...path.segments, segment]) });
}

/** Builds a path from its segments, e.g. `jsonPath('head', 'repo_id')`. */
export function jsonPath(...segments: JsonPathSegment[]): JsonPath {
  return Object.freeze({ segments: Object.freeze([...segments]) });
}

const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Renders a path as `$.head.repo_id` or `$[0].labels[2]`. */
export function formatJsonPath(path: JsonPath): string {
  let out = '$';
  for (const segment of path.segments) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (PLAIN_KEY.test(segment)) out += `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

/** Structural equality of two paths. */
export function jsonPathEquals(a: JsonPath, b: JsonPath): boolean {
  return a.segments.length === b.segments.length && a.segments.every((s, i) => s === b.segments[i]);
}

/** Why a document could not be decoded: where, and what was expected there. */
export interface JsonDecodeProblem {
  readonly path: JsonPath;
  /** Short, lowercase, e.g. `expected an integer, got string`. Never contains the value itself. */
  readonly message: string;
}

/**
 * Internal signal thrown by decoders and turned into a value ({@link JsonDecodeProblem}, then the
 * public `DecodeFailure` of `result.ts`) at the library's boundary. Never escapes the library.
 */
export class JsonDecodeError extends Error {
  constructor(
    readonly path: JsonPath,
    readonly reason: string,
  ) {
    super(`${formatJsonPath(path)}: ${reason}`);
    this.name = 'JsonDecodeError';
  }
}

/** A decoder turns an untrusted JSON value at `path` into a typed value or throws JsonDecodeError. */
export type Decoder<T> = (value: unknown, path: JsonPath) => T;

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function fail(path: JsonPath, expected: string, value: unknown): never {
  throw new JsonDecodeError(path, `expected ${expected}, got ${kindOf(value)}`);
}

/** Runs a decoder on a parsed document; failures become values. */
export function runDecoder<T>(
  decoder: Decoder<T>,
  value: unknown,
): { ok: true; value: T } | { ok: false; problem: JsonDecodeProblem } {
  try {
    return { ok: true, value: decoder(value, ROOT_PATH) };
  } catch (err) {
    if (err instanceof JsonDecodeError)
      return { ok: false, problem: { path: err.path, message: err.reason } };
    throw err;
  }
}

/** Parses JSON text and decodes it. A syntax error is reported at `$`. */
export function decodeJsonText<T>(
  decoder: Decoder<T>,
  text: string,
): { ok: true; value: T } | { ok: false; problem: JsonDecodeProblem } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { ok: false, problem: { path: ROOT_PATH, message: 'body is not valid json' } };
  }
  return runDecoder(decoder, parsed);
}

// ---- primitive decoders -------------------------------------------------------------------------

export const str: Decoder<string> = (v, p) => (typeof v === 'string' ? v : fail(p, 'a string', v));

export const bool: Decoder<boolean> = (v, p) => (typeof v === 'boolean' ? v : fail(p, 'a boolean', v));

/** An integer that JavaScript represents exactly (int64 ids beyond 2^53 are refused, not rounded). */
export const int: Decoder<number> = (v, p) => {
  if (typeof v !== 'number') fail(p, 'an integer', v);
  if (!Number.isSafeInteger(v)) throw new JsonDecodeError(p, 'expected a safe integer');
  return v;
};

/** An RFC 3339 instant. */
export const instant: Decoder<Date> = (v, p) => {
  if (typeof v !== 'string') fail(p, 'an rfc 3339 timestamp', v);
  const ms = Date.parse(v);
  if (Number.isNaN(ms)) throw new JsonDecodeError(p, 'expected an rfc 3339 timestamp');
  return new Date(ms);
};

/** A JSON object, for field access by {@link field} and friends. */
export const object: Decoder<Record<string, unknown>> = (v, p) =>
  typeof v === 'object' && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : fail(p, 'an object', v);

/** An array of `item`; `null` is accepted as the empty list (the forge sends null for "none"). */
export function listOrNull<T>(item: Decoder<T>): Decoder<T[]> {
  return (v, p) => {
    if (v === null || v === undefined) return [];
    if (!Array.isArray(v)) fail(p, 'an array', v);
    return v.map((x, i) => item(x, childPath(p, i)));
  };
}

/** A strict array of `item`. */
export function list<T>(item: Decoder<T>): Decoder<T[]> {
  return (v, p) => {
    if (!Array.isArray(v)) fail(p, 'an array', v);
    return v.map((x, i) => item(x, childPath(p, i)));
  };
}

/** Reads a required field of an object. */
export function field<T>(obj: Record<string, unknown>, path: JsonPath, key: string, decoder: Decoder<T>): T {
  return decoder(obj[key], childPath(path, key));
}

/** Reads an optional field: missing and `null` give undefined. */
export function optField<T>(
  obj: Record<string, unknown>,
  path: JsonPath,
  key: string,
  decoder: Decoder<T>,
): T | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  return decoder(v, childPath(path, key));
}

/** Reads a field with a default for missing and `null`. */
export function defField<T>(
  obj: Record<string, unknown>,
  path: JsonPath,
  key: string,
  decoder: Decoder<T>,
  fallback: T,
): T {
  const v = optField(obj, path, key, decoder);
  return v === undefined ? fallback : v;
}

/** Reads an optional string where the empty string also means absent. */
export function optText(obj: Record<string, unknown>, path: JsonPath, key: string): string | undefined {
  const v = optField(obj, path, key, str);
  return v === undefined || v === '' ? undefined : v;
}
