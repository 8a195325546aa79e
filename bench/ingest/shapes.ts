/**
 * The requests of the ingest benchmarks (run.ts against the service, floor.ts against a server
 * that does nothing), built once here so both measure exactly the same bytes on the wire.
 */
import type { LoadRequest } from './loadgen.js';

const PAYLOAD_1K = Buffer.alloc(1024, 0x61);
const FILLER = 'x'.repeat(900);

/** The event headers of single event `i` (binary mode), a fresh id each call. */
export function singleEventHeaders(i: number): Array<readonly [string, string]> {
  return [
    ['ce-specversion', '1.0'],
    ['ce-id', `e-${i}-${process.hrtime.bigint()}`],
    ['ce-source', `https://bench.example/src/${i % 64}`],
    ['ce-type', 'bench.reading'],
    ['ce-time', new Date().toISOString()],
    ['content-type', 'application/octet-stream'],
  ];
}

/** The 1 KiB payload of every single event. */
export const SINGLE_PAYLOAD = PAYLOAD_1K;

/** `host` is `127.0.0.1:port`; `token` adds an `authorization: Bearer` header. */
export function requestShapes(host: string, token?: string) {
  const authHeader = token ? `\r\nauthorization: Bearer ${token}` : '';
  const singleHead = (i: number) =>
    `POST /v1/events HTTP/1.1\r\nhost: ${host}${authHeader}${singleEventHeaders(i)
      .map(([name, value]) => `\r\n${name}: ${value}`)
      .join('')}`;
  const element = (i: number, j: number, time: string) =>
    `{"specversion":"1.0","id":"b-${i}-${j}","source":"https://bench.example/src/${j % 64}","type":"bench.reading","time":"${time}","datacontenttype":"application/json","data":{"v":"${FILLER}"}}`;
  const batchHead = `POST /v1/events:batchCreate HTTP/1.1\r\nhost: ${host}${authHeader}\r\ncontent-type: application/cloudevents-batch+json`;
  return {
    /** One binary-mode event with a 1 KiB payload. */
    single: (i: number): LoadRequest => ({ head: singleHead(i), body: PAYLOAD_1K }),
    /** A batch of 100 structured events of about 1 KiB each. */
    batch: (i: number): LoadRequest => {
      const time = new Date().toISOString();
      const parts: string[] = [];
      for (let j = 0; j < 100; j++) parts.push(element(i, j, time));
      return { head: batchHead, body: Buffer.from(`[${parts.join(',')}]`) };
    },
  };
}

/** Elements a batch response says were created (refused elements answer 503 inside a 200). */
export function createdOf(status: number, body: Buffer): number {
  if (status !== 200) return 0;
  const m = /"created":(\d+)/.exec(body.toString('latin1', Math.max(0, body.length - 64)));
  return m ? Number(m[1]) : 0;
}
