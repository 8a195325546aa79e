/**
 * The floor of the HTTP path: a plain `node:http` server that reads each request body and answers
 * 200 with a response of the ingest service's shape and size, doing nothing else (no routing
 * framework, no auth, no decoding, no broker). floor.ts drives it with the same generator and
 * requests as run.ts drives the service. Usage: `node --import tsx noop-server.ts <port>`.
 *
 * With `NOOP_REFUSAL` set (`{ headers, body }` as JSON: the service's 503 `overloaded`, which
 * run.ts builds) it is the floor of a refusal instead: every request is answered at once with it,
 * its body left for Node to drop, as the service's early refusal answers it (run.ts measures both
 * on the same requests in the same run).
 */
import { createServer } from 'node:http';
import { EVENT_TOPIC } from '@event-observatory/broker';

const resource = (i: number) => ({
  name: `events/https%3A%2F%2Fbench.example%2Fsrc%2F${i % 64}/e-${i}`,
  id: `e-${i}`,
  source: `https://bench.example/src/${i % 64}`,
  eventType: 'bench.reading',
  time: new Date().toISOString(),
  partitionKey: `https://bench.example/src/${i % 64}#`,
  destination: { topic: EVENT_TOPIC, partition: i % 12, offset: 1000000 + i },
});
const events = Array.from({ length: 100 }, (_, i) => resource(i));
const SINGLE = Buffer.from(JSON.stringify(resource(0)));
const BATCH = Buffer.from(
  JSON.stringify({
    events,
    entries: events.map((event, index) => ({ index, event })),
    created: 100,
    failed: 0,
  }),
);

const answer = createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    const body = req.url === '/v1/events:batchCreate' ? BATCH : SINGLE;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  });
});
/** Answers every request at once with `refusal`. */
function refusing(refusal: { headers: Record<string, string>; body: string }) {
  const body = Buffer.from(refusal.body);
  const headers = { ...refusal.headers, 'content-length': String(body.length) };
  return createServer((_req, res) => {
    res.writeHead(503, headers);
    res.end(body);
  });
}
const server = process.env.NOOP_REFUSAL ? refusing(JSON.parse(process.env.NOOP_REFUSAL)) : answer;
server.keepAliveTimeout = 60_000;
server.listen(Number(process.argv[2]), '127.0.0.1', () => process.send?.('listening'));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
