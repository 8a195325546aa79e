/** A tag whose distinct values are capped; see `cappedLabel`. */
export interface CappedLabel {
  /**
   * True when `value` may be recorded: it was seen before, or there is still room for a new
   * value (which is then remembered). False means: drop this sample.
   */
  admit(value: string): boolean;
  /** Distinct values admitted so far. */
  readonly size: number;
  readonly max: number;
}

/**
 * Caps the distinct values of one tag of one meter, as Micrometer's `maximumAllowableTags` does:
 * the first `max` values are admitted for good; a later new value is denied silently (the caller
 * drops the sample) while the admitted values keep working. Use one instance per meter.
 *
 * @example
 * ```ts
 * const typeTag = cappedLabel(50);
 * if (typeTag.admit(event.type)) received.inc({ type: event.type, mode });
 * ```
 */
export function cappedLabel(max = 50): CappedLabel {
  if (!Number.isInteger(max) || max < 1)
    throw new RangeError(`cappedLabel: max must be a positive integer, got ${max}`);
  const seen = new Set<string>();
  return {
    max,
    get size() {
      return seen.size;
    },
    admit(value: string): boolean {
      if (seen.has(value)) return true;
      if (seen.size >= max) return false;
      seen.add(value);
      return true;
    },
  };
}
