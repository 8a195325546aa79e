/** The consumer: Kafka -> PostgreSQL; its listeners: health (`http`), the admin API (`admin`), /metrics (`metrics`). */
import { Construct } from 'constructs';
import { adminAuthSettings, keyEnv } from '../auth.js';
import { kafkaBootstrap } from '../bundled.js';
import { databasePassword, databaseSettings, kafkaSecuritySettings } from '../credentials.js';
import { value } from '../helm.js';
import { CONSUMER_KEDA_ENABLED, consumerScaledObject } from './consumer-keda.js';
import { HttpService } from './http-service.js';

export class Consumer extends Construct {
  constructor(scope: Construct) {
    super(scope, 'consumer-component');
    new HttpService(this, {
      component: 'consumer',
      admin: true,
      settings: {
        BROKER_BOOTSTRAP_SERVERS: kafkaBootstrap(),
        BROKER_TOPIC: value('pipeline.topic'),
        BROKER_GROUP_ID: value('kafka.groupId'),
        ...kafkaSecuritySettings(),
        ...databaseSettings('writer'),
        // The migration Job applies the schema once per install or upgrade (README: "Migrations").
        CONSUMER_MIGRATE_ON_BOOT: 'false',
        ...adminAuthSettings(),
      },
      secretEnv: [databasePassword('writer'), keyEnv('ADMIN_AUTH', 'admin')],
      connections: { kafka: true, database: 'writer' },
      // The consumer's coordinated-shutdown budget (40 s) plus CONSUMER_DRAIN_TIMEOUT (30 s).
      shutdownBoundSeconds: 70,
      replicasOwnedWhen: CONSUMER_KEDA_ENABLED,
    });
    consumerScaledObject(this);
  }
}
