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

describe('controller configuration: the Kafka clusters Pipelines may name', () => {
  it("is the controller's own cluster by default; a list without ';' is one cluster, ';' separates clusters", () => {
    expect(readControllerConfig({ BROKER_BOOTSTRAP_SERVERS: 'k0:9092,k1:9092' }).allowedClusters).toEqual([
      ['k0:9092', 'k1:9092'],
    ]);
    const one = readControllerConfig({ CONTROLLER_ALLOWED_BOOTSTRAP: 'k0:9092,k0:9093' });
    expect(one.allowedClusters).toEqual([['k0:9092', 'k0:9093']]);
    const two = readControllerConfig({ CONTROLLER_ALLOWED_BOOTSTRAP: 'k0:9092,k1:9092; other:9092' });
    expect(two.allowedClusters).toEqual([['k0:9092', 'k1:9092'], ['other:9092']]);
    expect(two.allowedClusters.flat()).toEqual(['k0:9092', 'k1:9092', 'other:9092']);
  });

  it('refuses a server in two clusters, and an entry that is not host:port', () => {
    expect(() => readControllerConfig({ CONTROLLER_ALLOWED_BOOTSTRAP: 'k0:9092;K0:9092' })).toThrow(
      /k0:9092 is in two clusters/,
    );
    expect(() => readControllerConfig({ CONTROLLER_ALLOWED_BOOTSTRAP: 'k0:9092;nope' })).toThrow(
      /CONTROLLER_ALLOWED_BOOTSTRAP/,
    );
  });
});
