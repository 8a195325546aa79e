/** The consumer: Kafka -> PostgreSQL; its HTTP listener is the admin API, /metrics and health. */
import { Construct } from 'constructs';
import { databasePassword, databaseSettings, kafkaSecuritySettings } from '../credentials.js';
import { value } from '../helm.js';
import { authKey } from './common.js';
import { HttpService } from './http-service.js';

export class Consumer extends Construct {
  constructor(scope: Construct) {
    super(scope, 'consumer-component');
    new HttpService(this, {
      component: 'consumer',
      settings: {
        BROKER_BOOTSTRAP_SERVERS: value('kafka.bootstrapServers'),
        BROKER_TOPIC: value('pipeline.topic'),
        BROKER_GROUP_ID: value('kafka.groupId'),
        ...kafkaSecuritySettings(),
        ...databaseSettings('writer'),
        // The migration Job applies the schema once per install or upgrade (README: "Migrations").
        CONSUMER_MIGRATE_ON_BOOT: 'false',
        AUTH_ALGORITHM: value('auth.algorithm'),
        AUTH_ISSUER: value('auth.issuer'),
        AUTH_AUDIENCE: value('auth.audience'),
      },
      secretEnv: [databasePassword('writer'), authKey()],
      connections: { kafka: true, database: 'writer' },
      // Document 2: the coordinated-shutdown budget (40 s) plus CONSUMER_DRAIN_TIMEOUT (30 s).
      terminationGracePeriodSeconds: 75,
    });
  }
}
