/**
 * The CloudEvent model shared by the ingestion service (which decodes HTTP requests into it and
 * encodes it as a Kafka record) and the consumer (which decodes Kafka records back into it).
 *
 * Every attribute value is kept as the text that travels on the wire. Extension attributes are
 * held in their canonical string form (CloudEvents type system: Boolean `true`/`false`, Integer in
 * decimal), because that is how both the HTTP binary mode and the Kafka binary mode carry them.
 */

/** The only CloudEvents specification version this service accepts. */
export const SPEC_VERSION = '1.0';

export interface CloudEvent {
  readonly specversion: typeof SPEC_VERSION;
  readonly id: string;
  readonly source: string;
  readonly type: string;
  /** RFC 3339 timestamp text exactly as the producer sent it. Required by the service, optional in the model. */
  readonly time?: string;
  readonly subject?: string;
  readonly datacontenttype?: string;
  readonly dataschema?: string;
  /** Extension attributes by name (`[a-z0-9]{1,20}`), values in canonical string form. */
  readonly extensions: Readonly<Record<string, string>>;
  /**
   * The payload bytes exactly as they reach the broker. `undefined` means the event has no data;
   * a zero-length payload is treated as no data (the HTTP binary mode cannot tell them apart).
   */
  readonly data?: Uint8Array;
}

/** Context attributes defined by CloudEvents 1.0 (everything else is an extension). */
export const CONTEXT_ATTRIBUTES = [
  'specversion',
  'id',
  'source',
  'type',
  'time',
  'subject',
  'datacontenttype',
  'dataschema',
] as const;

export type ContextAttribute = (typeof CONTEXT_ATTRIBUTES)[number];

const CONTEXT_SET: ReadonlySet<string> = new Set(CONTEXT_ATTRIBUTES);

/** True when `name` is one of the CloudEvents 1.0 context attributes. */
export function isContextAttribute(name: string): name is ContextAttribute {
  return CONTEXT_SET.has(name);
}
