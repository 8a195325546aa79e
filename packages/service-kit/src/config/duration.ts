const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** Spelled-out units as the spec's Limits tables write them (`250 millis`, `30 seconds`). */
const UNIT_NAMES: Record<string, keyof typeof UNIT_MS> = {
  ms: 'ms',
  milli: 'ms',
  millis: 'ms',
  millisecond: 'ms',
  milliseconds: 'ms',
  s: 's',
  sec: 's',
  second: 's',
  seconds: 's',
  m: 'm',
  min: 'm',
  minute: 'm',
  minutes: 'm',
  h: 'h',
  hour: 'h',
  hours: 'h',
  d: 'd',
  day: 'd',
  days: 'd',
};

const DURATION = /^(\d+(?:\.\d+)?) ?([a-z]+)$/;

/** The accepted spellings, for error messages. */
export const DURATION_HINT = 'a duration such as 250ms, 10s, 5m, 24h or 90d';

/**
 * Parses a duration written as a number and one unit (`ms`, `s`, `m`, `h`, `d`, or spelled out
 * as in the spec: `250 millis`, `30 seconds`, `24 hours`, `90 days`) into whole milliseconds.
 * `0` alone is accepted; any other bare number is refused, because `10` could mean ten
 * milliseconds or ten seconds. Returns `undefined` when the text is not a duration.
 */
export function tryParseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (trimmed === '0') return 0;
  const match = DURATION.exec(trimmed);
  const unit = match && Object.hasOwn(UNIT_NAMES, match[2]!) ? UNIT_NAMES[match[2]!] : undefined;
  if (!match || !unit) return undefined;
  const value = Number(match[1]) * UNIT_MS[unit]!;
  if (!Number.isFinite(value) || value > Number.MAX_SAFE_INTEGER) return undefined;
  return Math.round(value);
}

/**
 * Parses `250ms`, `10s`, `5m`, `24h` or `90d` into milliseconds.
 *
 * @example
 * ```ts
 * parseDuration('250ms'); // 250
 * parseDuration('90d');   // 7_776_000_000
 * ```
 * @throws RangeError when the text is not a duration.
 */
export function parseDuration(text: string): number {
  const ms = tryParseDuration(text);
  if (ms === undefined) throw new RangeError(`expected ${DURATION_HINT}, got ${JSON.stringify(text)}`);
  return ms;
}

/** Writes milliseconds back in the largest unit that divides them exactly (`90000` -> `90s`). */
export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    const size = UNIT_MS[unit]!;
    if (ms !== 0 && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
