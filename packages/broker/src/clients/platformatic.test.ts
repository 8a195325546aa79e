import { describe, expect, it } from 'vitest';
import { platformaticKafka, requireOptional } from './platformatic.js';

describe('the optional @platformatic/kafka', () => {
  it('loads once and is the same module on every call', () => {
    expect(platformaticKafka().Producer).toBeTypeOf('function');
    expect(platformaticKafka()).toBe(platformaticKafka());
  });

  it('names a package that is not installed and the setting that needs it', () => {
    expect(() => requireOptional('@event-observatory/not-installed')).toThrow(
      /KAFKA_CLIENT=platformatic needs @event-observatory\/not-installed installed/,
    );
  });
});
