#!/usr/bin/env node
/**
 * `observatory-token`: prints a producer token signed with this ingest's static key, for an
 * operator who holds that Secret (the chart's NOTES.txt: `kubectl exec deploy/<release>-ingest --
 * node services/ingest/dist/token-cli.js`). Mints with the settings ingest reads (token.ts).
 *
 * Usage: observatory-token [--subject <sub>] [--ttl <duration, default 24h>] [--scope <scopes>]
 */
import { runMain } from '@event-observatory/service-kit/config';
import { mintToken } from './token.js';

runMain(async () => {
  process.stdout.write(`${await mintToken(process.env, process.argv.slice(2))}\n`);
});
