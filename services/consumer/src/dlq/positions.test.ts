import { describe, expect, it } from 'vitest';
import { advance, isReplayed, type Positions, scanStart } from './positions.js';

const positions = (): Positions =>
  new Map([
    [
      'malformed',
      new Map([
        [0, 10n],
        [1, 4n],
      ]),
    ],
    ['unknown-type', new Map([[0, 6n]])],
  ]);

describe('dead-letter replay positions', () => {
  it('a scan starts at the lowest position of the reasons it looks for', () => {
    expect(scanStart(positions(), ['malformed'])).toEqual(
      new Map([
        [0, 10n],
        [1, 4n],
      ]),
    );
    expect(scanStart(positions(), ['malformed', 'unknown-type'])).toEqual(new Map([[0, 6n]]));
    expect(scanStart(new Map(), ['malformed'])).toEqual(new Map());
  });

  it('hides a letter below its own reason position only', () => {
    expect(isReplayed(positions(), 'malformed', 0, '9')).toBe(true);
    expect(isReplayed(positions(), 'malformed', 0, '10')).toBe(false);
    expect(isReplayed(positions(), 'unknown-type', 0, '9')).toBe(false);
    expect(isReplayed(positions(), 'invalid-payload', 2, '0')).toBe(false);
  });

  it('moves each reason to its first pending letter, else to the end of what was read', () => {
    const moved = advance(
      positions(),
      ['malformed', 'unknown-type'],
      new Map([
        [0, 50n],
        [1, 3n],
      ]),
      [
        { partition: 0, offset: '30', reason: 'unknown-type' },
        { partition: 0, offset: '40', reason: 'unknown-type' },
      ],
    );
    // partition 1 read only to 3, below malformed's 4: that position stays
    expect(moved).toEqual(
      new Map([
        ['malformed', new Map([[0, 50n]])],
        [
          'unknown-type',
          new Map([
            [0, 30n],
            [1, 3n],
          ]),
        ],
      ]),
    );
  });

  it('never moves a position back', () => {
    expect(advance(positions(), ['malformed'], new Map([[0, 8n]]), [])).toEqual(new Map());
  });
});
