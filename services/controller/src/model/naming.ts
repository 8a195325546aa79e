/**
 * The topic-name rule: how `spec.topics[].name` becomes a Kafka topic name. The operator sets a
 * template (`CONTROLLER_TOPIC_NAME_TEMPLATE`): `{name}` (the default) takes names as given, so two
 * namespaces declaring one name meet in one topic (the older Pipeline keeps it, the other reports
 * `Conflict`); `{namespace}.{name}` gives each namespace its own. Everything after this point
 * (ownership, the plan, status, deletion) sees Kafka names only.
 */
import { ADOPT_TOPICS_ANNOTATION, type Pipeline, UNMANAGED_TOPICS_ANNOTATION } from '../pipeline/types.js';

const PLACEHOLDER = /\{([a-z]+)\}/g;
const KNOWN = new Set(['namespace', 'pipeline', 'name']);

/** Checks a template; the error names the variable and the value. */
export function parseTopicTemplate(template: string, variable = 'CONTROLLER_TOPIC_NAME_TEMPLATE'): string {
  const unknown = [...template.matchAll(PLACEHOLDER)].map((m) => m[1]).filter((p) => !KNOWN.has(p ?? ''));
  const literal = template.replace(PLACEHOLDER, '');
  if (!template.includes('{name}') || unknown.length > 0 || !/^[a-zA-Z0-9._-]*$/.test(literal))
    throw new Error(
      `${variable}=${JSON.stringify(template)}: must contain {name}, may contain {namespace} and {pipeline}, and otherwise only letters, digits, '.', '_' and '-'`,
    );
  return template;
}

/**
 * The release namespace when it comes first: under the default rule (no operator template) its
 * Pipelines own the topics they declare, and another namespace's Pipeline never gets one of them.
 */
export function releaseNamespaceFirst(
  operatorTemplate: string | undefined,
  ownNamespace: string | undefined,
): string | undefined {
  return operatorTemplate ? undefined : ownNamespace;
}

/** The Kafka name of the topic `name` declared by `pipeline` under `template`. */
export function kafkaTopicName(template: string, pipeline: Pipeline, name: string): string {
  const values: Record<string, string> = {
    namespace: pipeline.metadata.namespace,
    pipeline: pipeline.metadata.name,
    name,
  };
  return template.replace(PLACEHOLDER, (whole, key: string) => values[key] ?? whole);
}

/**
 * The Pipeline with Kafka names in its topics, its flow topics that are declared ones, and its
 * topic annotations (itself under `{name}`).
 */
export function withKafkaNames(pipeline: Pipeline, template: string): Pipeline {
  if (template === '{name}') return pipeline;
  const rename = (name: string) => kafkaTopicName(template, pipeline, name);
  const annotations = { ...pipeline.metadata.annotations };
  for (const key of [UNMANAGED_TOPICS_ANNOTATION, ADOPT_TOPICS_ANNOTATION]) {
    const raw = annotations[key];
    if (raw === undefined) continue;
    annotations[key] = raw
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '')
      .map((s) => (s === '*' ? s : rename(s)))
      .join(',');
  }
  const { flow } = pipeline.spec;
  // A flow topic not declared stays as written: the flow observer refuses it (refusedFlowTopics).
  const declared = new Set(pipeline.spec.topics.map((t) => t.name));
  const renameDeclared = (name: string) => (declared.has(name) ? rename(name) : name);
  return {
    ...pipeline,
    metadata: { ...pipeline.metadata, annotations },
    spec: {
      ...pipeline.spec,
      topics: pipeline.spec.topics.map((t) => ({ ...t, name: rename(t.name) })),
      ...(flow
        ? {
            flow: {
              ...flow,
              ...(flow.topic ? { topic: renameDeclared(flow.topic) } : {}),
              ...(flow.deadLetterTopic ? { deadLetterTopic: renameDeclared(flow.deadLetterTopic) } : {}),
            },
          }
        : {}),
    },
  };
}
