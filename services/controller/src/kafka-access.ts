/**
 * How the controller reaches the Kafka cluster of a Pipeline: `spec.kafka`'s TLS and
 * authentication (Strimzi's client shapes) turned into the broker package's `BrokerSecurity`,
 * with the Secrets it names read from the Pipeline's namespace, and used only when they carry the
 * label `observatory.dev/pipeline-credentials: "true"`. Only names of Secrets and keys ever appear
 * in errors, never their contents.
 */
import type { BrokerSecurity } from '@event-observatory/broker';
import type { PipelineApi } from './kube/api.js';

import { type KafkaAuthentication, PIPELINE_CREDENTIALS_LABEL, type Pipeline } from './pipeline/types.js';

/**
 * `spec.kafka` cannot be used (retried with backoff): a Secret or key it names is missing
 * (`KafkaAccessInvalid`), or the Secret lacks the label that lets the controller use it
 * (`CredentialsNotLabelled`).
 */
export class KafkaAccessError extends Error {
  override readonly name = 'KafkaAccessError';

  constructor(
    message: string,
    readonly reason: 'KafkaAccessInvalid' | 'CredentialsNotLabelled' = 'KafkaAccessInvalid',
  ) {
    super(message);
  }
}

const MECHANISMS = {
  'scram-sha-256': 'SCRAM-SHA-256',
  'scram-sha-512': 'SCRAM-SHA-512',
  plain: 'PLAIN',
} as const;

/**
 * The security of the Pipeline's cluster, or undefined when `spec.kafka` sets neither `tls` nor
 * `authentication` (the controller's own `BROKER_*` settings then apply).
 */
export async function pipelineSecurity(
  api: PipelineApi,
  pipeline: Pipeline,
): Promise<BrokerSecurity | undefined> {
  const { tls, authentication: auth } = pipeline.spec.kafka ?? {};
  if (!tls && !auth) return undefined;
  if (auth?.type === 'tls' && !tls)
    throw new KafkaAccessError('spec.kafka.authentication: type tls needs spec.kafka.tls');
  const { namespace } = pipeline.metadata;
  const secrets = new Map<string, Promise<Record<string, string>>>();
  const read = async (secretName: string, key: string): Promise<string> => {
    let secret = secrets.get(secretName);
    if (!secret) {
      secret = api.readSecret(namespace, secretName).then(
        ({ labels, data }) => {
          // Checked before any key is looked at: an unlabelled Secret's content is never used.
          if (labels[PIPELINE_CREDENTIALS_LABEL] !== 'true')
            throw new KafkaAccessError(
              `Secret ${namespace}/${secretName} lacks the label ${PIPELINE_CREDENTIALS_LABEL}: "true": the controller uses only Secrets labelled for it`,
              'CredentialsNotLabelled',
            );
          return data;
        },
        (error: Error) => {
          throw new KafkaAccessError(`Secret ${namespace}/${secretName}: ${error.message}`);
        },
      );
      secrets.set(secretName, secret);
    }
    const value = (await secret)[key];
    if (value === undefined || value === '')
      throw new KafkaAccessError(`Secret ${namespace}/${secretName} has no key ${key}`);
    return value;
  };
  const trusted = await Promise.all(
    (tls?.trustedCertificates ?? []).map((c) => read(c.secretName, c.certificate)),
  );
  const tlsSettings = tls
    ? {
        ...(trusted.length > 0 ? { ca: trusted.join('\n') } : {}),
        ...(auth?.type === 'tls' ? await clientCertificate(auth, read) : {}),
      }
    : undefined;
  if (!auth || auth.type === 'tls') return { protocol: 'SSL', tls: tlsSettings ?? {} };
  if (!auth.username || !auth.passwordSecret)
    throw new KafkaAccessError(`spec.kafka.authentication: ${auth.type} needs username and passwordSecret`);
  const sasl = {
    mechanism: MECHANISMS[auth.type],
    username: auth.username,
    password: await read(auth.passwordSecret.secretName, auth.passwordSecret.password),
  };
  return tlsSettings
    ? { protocol: 'SASL_SSL', sasl, tls: tlsSettings }
    : { protocol: 'SASL_PLAINTEXT', sasl };
}

async function clientCertificate(
  auth: KafkaAuthentication,
  read: (secretName: string, key: string) => Promise<string>,
): Promise<{ cert: string; key: string }> {
  const ref = auth.certificateAndKey;
  if (!ref) throw new KafkaAccessError('spec.kafka.authentication: tls needs certificateAndKey');
  return { cert: await read(ref.secretName, ref.certificate), key: await read(ref.secretName, ref.key) };
}
