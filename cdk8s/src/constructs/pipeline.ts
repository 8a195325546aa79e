/**
 * The default Pipeline: the event topic and its dead-letter topic, created by the controller. The
 * topic settings are those of the controller's default Pipeline (crds/examples/pipeline.yaml);
 * names, partitions, replication and retention (the dead-letter topic's its own, longer one) come
 * from values. Its spec.flow names the chart's
 * consumer group, so `kubectl get pipelines` shows the consumer's lag and the dead letters.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Construct } from 'constructs';
import { parse } from 'yaml';
import {
  Pipeline as PipelineObject,
  type PipelineSpecTopics,
} from '../../imports/pipelines-observatory.dev.js';
import { KAFKA_BUNDLED } from '../bundled.js';
import { blocks, onlyIf, scalar, value } from '../helm.js';
import { REPO_ROOT } from '../paths.js';
import { metadata } from './common.js';

const example = parse(readFileSync(join(REPO_ROOT, 'crds/examples/pipeline.yaml'), 'utf8')) as {
  spec: { topics: PipelineSpecTopics[] };
};
const [eventTopic, dlqTopic] = example.spec.topics as [PipelineSpecTopics, PipelineSpecTopics];
const ADOPT_ANNOTATION = 'observatory.dev/adopt-topics'; // services/controller: ADOPT_TOPICS_ANNOTATION
/** The release's controller reconciles it (CONTROLLER_NAME), never another release's. */
const CONTROLLER_ANNOTATION = 'observatory.dev/controller'; // services/controller: CONTROLLER_ANNOTATION
const dlqName = scalar('{{ printf "%s.dlq" .Values.pipeline.topic | toJson }}');
const hoursMs = (value: string) => scalar(`{{ mul .Values.pipeline.${value} 3600000 | toString | toJson }}`);
/** 0 (the default) is 3 against an external Kafka and 1 in the bundled single broker. */
const replicationFactor = scalar<number>(
  `{{ .Values.pipeline.replicationFactor | default (ternary 1 3 ${KAFKA_BUNDLED}) | int | toJson }}`,
);

export class Pipeline extends Construct {
  constructor(scope: Construct) {
    super(scope, 'pipeline-component');
    const pipeline = new PipelineObject(this, 'pipeline', {
      metadata: metadata('pipeline', 'events'),
      spec: {
        deletionPolicy: value('pipeline.deletionPolicy'),
        topics: [
          {
            name: value('pipeline.topic'),
            partitions: value<number>('pipeline.partitions'),
            replicationFactor,
            config: { ...eventTopic.config, 'retention.ms': hoursMs('retentionHours') },
          },
          {
            name: dlqName,
            partitions: dlqTopic.partitions,
            replicationFactor,
            config: { ...dlqTopic.config, 'retention.ms': hoursMs('deadLetterRetentionHours') },
          },
        ],
        // The chart's consumer reads the event topic and dead-letters to the other.
        flow: {
          consumerGroup: value('kafka.groupId'),
          topic: value('pipeline.topic'),
          deadLetterTopic: dlqName,
          maxLag: value<number>('pipeline.flow.maxLag'),
          maxDeadLettersPerMinute: value<number>('pipeline.flow.maxDeadLettersPerMinute'),
        },
      },
    });
    // Its own topics that exist already (a reinstall, or the bundled Kafka whose volume outlives
    // an uninstall) are taken back; the controller's allowlist entry for this Pipeline alone
    // (controller.ts) keeps the "*" to its own declared topics.
    blocks(pipeline, {
      '/metadata/annotations': `(merge (dict "${CONTROLLER_ANNOTATION}" (printf "%s/%s" .Release.Namespace .Release.Name)) .Values.commonAnnotations (ternary (dict "${ADOPT_ANNOTATION}" "*") (dict) (or .Values.pipeline.adoptExistingTopics ${KAFKA_BUNDLED})))`,
    });
    onlyIf(pipeline, 'and .Values.pipeline.create .Values.controller.enabled');
  }
}
