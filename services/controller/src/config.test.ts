import { describe, expect, it } from 'vitest';
import { readControllerConfig } from './config.js';

describe("controller configuration: the operator's topic rules", () => {
  it('reserves Kafka, schema registry and Connect topics, adopts nothing, and leaves the template per namespace by default', () => {
    const config = readControllerConfig({ POD_NAMESPACE: 'observatory' });
    expect(config.topicRules).toEqual({ reserved: ['__*', '_*', 'connect-*'], adoptable: [] });
    expect(config.topicNameTemplate).toBeUndefined();
    expect(config.ownNamespace).toBe('observatory');
  });

  it('takes topic patterns and namespace/pipeline:pattern entries, and names a bad entry', () => {
    const config = readControllerConfig({
      CONTROLLER_ADOPTABLE_TOPICS: 'legacy.*, observatory/obs-events:*',
      CONTROLLER_RESERVED_TOPICS: '__*,mirror.*',
    });
    expect(config.topicRules).toEqual({
      reserved: ['__*', 'mirror.*'],
      adoptable: ['legacy.*', 'observatory/obs-events:*'],
    });
    expect(() => readControllerConfig({ CONTROLLER_ADOPTABLE_TOPICS: 'team a:*' })).toThrow(/team a:\*/);
  });
});
