/** spec.kafka → BrokerSecurity: the protocol each combination means, and errors that name, never show, a secret. */
import { describe, expect, it } from 'vitest';
import { KafkaAccessError, pipelineSecurity } from './kafka-access.js';
import {
  API_VERSION,
  KIND,
  PIPELINE_CREDENTIALS_LABEL,
  type Pipeline,
  type PipelineKafka,
} from './pipeline/types.js';
import { FakeApiServer } from './testing/fake-api-server.js';

const server = new FakeApiServer();
const labelled = { [PIPELINE_CREDENTIALS_LABEL]: 'true' };
server.putSecret('ns', 'ca', { 'ca.crt': 'CA-PEM' }, labelled);
server.putSecret(
  'ns',
  'user',
  { password: 's3cret', 'user.crt': 'CERT-PEM', 'user.key': 'KEY-PEM' },
  labelled,
);
// Another team's Secret: no label (or not "true").
server.putSecret('ns', 'theirs', { password: 'their-s3cret' }, { [PIPELINE_CREDENTIALS_LABEL]: 'yes' });

const of = (kafka: PipelineKafka | undefined): Pipeline => ({
  apiVersion: API_VERSION,
  kind: KIND,
  metadata: { namespace: 'ns', name: 'p' },
  spec: { ...(kafka ? { kafka } : {}), topics: [] },
});
const tls = { trustedCertificates: [{ secretName: 'ca', certificate: 'ca.crt' }] };
const scram = (type: 'scram-sha-256' | 'scram-sha-512' | 'plain', secretName = 'user') => ({
  type,
  username: 'observatory',
  passwordSecret: { secretName, password: 'password' },
});

describe('spec.kafka security', () => {
  it('neither tls nor authentication: the controller’s own settings (undefined)', async () => {
    expect(await pipelineSecurity(server, of(undefined))).toBeUndefined();
    expect(await pipelineSecurity(server, of({ bootstrapServers: 'k:9092' }))).toBeUndefined();
  });

  it('maps tls and authentication to the Kafka protocol and mechanism', async () => {
    expect(await pipelineSecurity(server, of({ tls: {} }))).toEqual({ protocol: 'SSL', tls: {} });
    expect(await pipelineSecurity(server, of({ tls, authentication: scram('scram-sha-512') }))).toEqual({
      protocol: 'SASL_SSL',
      sasl: { mechanism: 'SCRAM-SHA-512', username: 'observatory', password: 's3cret' },
      tls: { ca: 'CA-PEM' },
    });
    expect(await pipelineSecurity(server, of({ authentication: scram('plain') }))).toEqual({
      protocol: 'SASL_PLAINTEXT',
      sasl: { mechanism: 'PLAIN', username: 'observatory', password: 's3cret' },
    });
    const certificateAndKey = { secretName: 'user', certificate: 'user.crt', key: 'user.key' };
    expect(
      await pipelineSecurity(server, of({ tls, authentication: { type: 'tls', certificateAndKey } })),
    ).toEqual({ protocol: 'SSL', tls: { ca: 'CA-PEM', cert: 'CERT-PEM', key: 'KEY-PEM' } });
  });

  it('a missing Secret or key fails naming it, without any secret value', async () => {
    const missing = pipelineSecurity(server, of({ tls, authentication: scram('scram-sha-256', 'gone') }));
    await expect(missing).rejects.toThrow(KafkaAccessError);
    await expect(missing).rejects.toThrow(/^Secret ns\/gone: /);
    const noKey = pipelineSecurity(
      server,
      of({ tls: { trustedCertificates: [{ secretName: 'user', certificate: 'ca.crt' }] } }),
    );
    await expect(noKey).rejects.toThrow('Secret ns/user has no key ca.crt');
    await expect(noKey).rejects.not.toThrow(/s3cret|CERT-PEM|KEY-PEM/);
    await expect(
      pipelineSecurity(
        server,
        of({
          authentication: {
            type: 'tls',
            certificateAndKey: { secretName: 'user', certificate: 'user.crt', key: 'user.key' },
          },
        }),
      ),
    ).rejects.toThrow('spec.kafka.authentication: type tls needs spec.kafka.tls');
  });

  it('a Secret without the label observatory.dev/pipeline-credentials: "true" is never used (CredentialsNotLabelled)', async () => {
    const unlabelled = pipelineSecurity(
      server,
      of({ tls, authentication: scram('scram-sha-512', 'theirs') }),
    );
    await expect(unlabelled).rejects.toMatchObject({
      reason: 'CredentialsNotLabelled',
      message: `Secret ns/theirs lacks the label ${PIPELINE_CREDENTIALS_LABEL}: "true": the controller uses only Secrets labelled for it`,
    });
    await expect(unlabelled).rejects.not.toThrow(/their-s3cret/);
  });
});
