import { describe, expect, it } from 'vitest';
import { ADOPT_TOPICS_ANNOTATION, type Pipeline } from '../pipeline/types.js';
import { parseTopicTemplate, withKafkaNames } from './naming.js';

const pipeline: Pipeline = {
  apiVersion: 'observatory.dev/v1alpha1',
  kind: 'Pipeline',
  metadata: { name: 'p', namespace: 'team-a', annotations: { [ADOPT_TOPICS_ANNOTATION]: 'events, *' } },
  spec: {
    topics: [{ name: 'events', partitions: 1, replicationFactor: 1 }],
    flow: { consumerGroup: 'g', topic: 'events', deadLetterTopic: 'elsewhere.dlq' },
  },
};

describe('topic-name rule', () => {
  it('leaves names as given under {name}', () => {
    expect(withKafkaNames(pipeline, '{name}')).toBe(pipeline);
  });

  it('renames topics, the flow topic and the annotations under a template; a flow topic not declared stays as written', () => {
    const named = withKafkaNames(pipeline, '{namespace}.{name}');
    expect(named.spec.topics[0]?.name).toBe('team-a.events');
    expect(named.spec.flow).toMatchObject({ topic: 'team-a.events', deadLetterTopic: 'elsewhere.dlq' });
    const undeclared = {
      ...pipeline,
      spec: { ...pipeline.spec, flow: { consumerGroup: 'g', topic: 'elsewhere' } },
    };
    expect(withKafkaNames(undeclared, '{namespace}.{name}').spec.flow?.topic).toBe('elsewhere');
    expect(named.metadata.annotations?.[ADOPT_TOPICS_ANNOTATION]).toBe('team-a.events,*');
    expect(pipeline.spec.topics[0]?.name).toBe('events');
  });

  it('refuses a template without {name}, with an unknown placeholder or a character Kafka refuses', () => {
    expect(parseTopicTemplate('{pipeline}-{name}')).toBe('{pipeline}-{name}');
    for (const bad of ['{namespace}', '{team}.{name}', '{namespace}/{name}'])
      expect(() => parseTopicTemplate(bad)).toThrow(/CONTROLLER_TOPIC_NAME_TEMPLATE=.*must contain \{name\}/);
  });
});
