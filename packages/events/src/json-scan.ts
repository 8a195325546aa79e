/**
 * Byte-level JSON scanning: finds the raw byte span of values without decoding them, so a batch
 * can be split into its elements (each size-checked on its raw bytes before it is decoded, and a
 * broken element spoils only itself) and so the `data` member of a structured event reaches the
 * broker exactly as the producer wrote it (no re-serialisation of numbers or whitespace).
 *
 * The scanner does not validate; `JSON.parse` does that on the spans it returns.
 */
import { malformed } from './rejection.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

function isWs(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** Index of the first non-whitespace byte at or after `i`. */
export function skipWs(b: Uint8Array, i: number): number {
  while (i < b.length && isWs(b[i])) i++;
  return i;
}

/** Past this many bytes a string's end is searched with `indexOf` (native) instead of a loop. */
const SHORT_STRING = 48;

function skipString(b: Uint8Array, i: number): number {
  // b[i] is the opening quote. Most strings are short, where this loop beats a native call.
  const loopEnd = i + SHORT_STRING;
  for (let j = i + 1; j < b.length; j++) {
    const c = b[j];
    if (c === BACKSLASH) j++;
    else if (c === QUOTE) return j + 1;
    else if (j > loopEnd) return skipLongString(b, i, j);
  }
  throw malformed('unterminated JSON string');
}

/**
 * The end of the string opened at `b[i]`, searched from `from` (not escaped) natively: the next
 * quote ends it unless an odd run of backslashes escapes it.
 */
function skipLongString(b: Uint8Array, i: number, from: number): number {
  for (;;) {
    const q = b.indexOf(QUOTE, from);
    if (q < 0) throw malformed('unterminated JSON string');
    let k = q - 1;
    while (k > i && b[k] === BACKSLASH) k--;
    if ((q - 1 - k) % 2 === 0) return q + 1;
    from = q + 1;
  }
}

/** Index just after the JSON value that starts at `i` (which must not be whitespace). */
export function skipValue(b: Uint8Array, i: number): number {
  const c = b[i];
  if (c === QUOTE) return skipString(b, i);
  if (c === OPEN_BRACE || c === OPEN_BRACKET) {
    let depth = 0;
    for (let j = i; j < b.length; j++) {
      const d = b[j];
      if (d === QUOTE) {
        j = skipString(b, j) - 1;
      } else if (d === OPEN_BRACE || d === OPEN_BRACKET) {
        depth++;
      } else if (d === CLOSE_BRACE || d === CLOSE_BRACKET) {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    throw malformed('unterminated JSON object or array');
  }
  let j = i;
  while (j < b.length) {
    const d = b[j];
    if (d === COMMA || d === CLOSE_BRACE || d === CLOSE_BRACKET || isWs(d)) break;
    j++;
  }
  if (j === i) throw malformed('expected a JSON value');
  return j;
}

/**
 * Splits a JSON array document into the raw byte spans of its elements. Throws `malformed` when
 * the document is not an array at the top level (its elements are not judged here). Stops after
 * `max + 1` elements and returns them, the rest unread: a caller that refuses more than `max` need
 * not hold a view of every element of a body of tiny ones (`[0,0,…]`).
 */
export function splitJsonArray(b: Uint8Array, max = Number.POSITIVE_INFINITY): Uint8Array[] {
  let i = skipWs(b, 0);
  if (b[i] !== OPEN_BRACKET) throw malformed('a batch must be a JSON array of CloudEvents');
  i = skipWs(b, i + 1);
  const out: Uint8Array[] = [];
  if (b[i] === CLOSE_BRACKET) {
    i++;
  } else {
    for (;;) {
      if (i >= b.length) throw malformed('unterminated JSON array');
      const end = skipValue(b, i);
      out.push(b.subarray(i, end));
      if (out.length > max) return out;
      i = skipWs(b, end);
      if (b[i] === COMMA) {
        i = skipWs(b, i + 1);
        continue;
      }
      if (b[i] === CLOSE_BRACKET) {
        i++;
        break;
      }
      throw malformed('expected , or ] in the batch array');
    }
  }
  if (skipWs(b, i) !== b.length) throw malformed('unexpected content after the batch array');
  return out;
}

/**
 * Raw byte span of the top-level member `name` of a JSON object document (the last one when the
 * name repeats, as `JSON.parse` does). Assumes `b` is valid JSON (call after `JSON.parse`).
 */
export function memberSpan(b: Uint8Array, name: string): Uint8Array | undefined {
  let i = skipWs(b, 0);
  if (b[i] !== OPEN_BRACE) return undefined;
  i = skipWs(b, i + 1);
  let found: Uint8Array | undefined;
  const nameBytes = Buffer.from(name, 'utf8');
  while (i < b.length && b[i] !== CLOSE_BRACE) {
    const keyEnd = skipString(b, i);
    const matches = keyIs(b, i + 1, keyEnd - 1, name, nameBytes);
    i = skipWs(b, keyEnd);
    if (b[i] !== COLON) return found;
    i = skipWs(b, i + 1);
    const valueEnd = skipValue(b, i);
    if (matches) found = b.subarray(i, valueEnd);
    i = skipWs(b, valueEnd);
    if (b[i] === COMMA) i = skipWs(b, i + 1);
  }
  return found;
}

const utf8 = new TextDecoder();

/**
 * Whether the raw JSON string content `b[start, end)` (between its quotes) denotes `name`:
 * compared byte for byte when it has no escape (the common case), else decoded as JSON.
 */
function keyIs(b: Uint8Array, start: number, end: number, name: string, nameBytes: Uint8Array): boolean {
  let escaped = false;
  for (let j = start; j < end; j++) {
    if (b[j] === BACKSLASH) {
      escaped = true;
      break;
    }
  }
  if (escaped) return JSON.parse(utf8.decode(b.subarray(start - 1, end + 1))) === name;
  if (end - start !== nameBytes.length) return false;
  for (let j = 0; j < nameBytes.length; j++) if (b[start + j] !== nameBytes[j]) return false;
  return true;
}
