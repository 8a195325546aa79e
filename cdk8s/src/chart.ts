/** The platform as one cdk8s chart: every component's construct. */
import { App, Chart } from 'cdk8s';
import { BundledKafka } from './constructs/bundled-kafka.js';
import { BundledPostgresql } from './constructs/bundled-postgresql.js';
import { Consumer } from './constructs/consumer.js';
import { Controller } from './constructs/controller.js';
import { ControllerPreDelete } from './constructs/controller-pre-delete.js';
import { HelmTest } from './constructs/helm-test.js';
import { IngestHttpRoute } from './constructs/http-route.js';
import { Ingest } from './constructs/ingest.js';
import { Jobs } from './constructs/jobs.js';
import { Migration } from './constructs/migration.js';
import { Monitoring } from './constructs/monitoring.js';
import { NetworkPolicies } from './constructs/network-policies.js';
import { Pipeline } from './constructs/pipeline.js';
import { PostgresExporter } from './constructs/postgres-exporter.js';
import { ScrapePolicies } from './constructs/scrape-policies.js';
import { Search } from './constructs/search.js';

export function platformChart(): Chart {
  const chart = new Chart(new App(), 'observatory', { disableResourceNameHashes: true });
  new Ingest(chart);
  new IngestHttpRoute(chart);
  new Consumer(chart);
  new Search(chart);
  new Controller(chart);
  new ControllerPreDelete(chart);
  new Pipeline(chart);
  new Jobs(chart);
  new Migration(chart);
  new NetworkPolicies(chart);
  new Monitoring(chart);
  new PostgresExporter(chart);
  new ScrapePolicies(chart);
  new BundledKafka(chart);
  new BundledPostgresql(chart);
  new HelmTest(chart);
  return chart;
}
