/** The benchmark's CloudEvents and the COPY rendering of their rows (shared by run.ts and db.ts). */

import type { CloudEvent } from '@event-observatory/events';
import type { EventInsertRow } from '@event-observatory/store';

export function benchEvent(i: number, now: number): CloudEvent {
  const device = `device-${i % 5000}`;
  return {
    specversion: '1.0',
    id: `bench-${i}`,
    source: `urn:bench:site-${i % 50}`,
    type: `com.example.bench.${['reading', 'alarm', 'heartbeat', 'status'][i % 4]}`,
    time: new Date(now - (i % 86_400) * 1000).toISOString(),
    subject: device,
    datacontenttype: 'application/json',
    extensions: i % 10 === 0 ? { severity: 'error', tags: 'bench,hot' } : { severity: 'info' },
    data: Buffer.from(
      JSON.stringify({
        deviceId: device,
        seq: i,
        temperature: 20 + (i % 100) / 10,
        humidity: 40 + (i % 37),
        message: `reading ${i} from ${device} in hall ${i % 12}`,
      }),
    ),
  };
}

/** One value in COPY text format. */
function copyValue(v: string | number | null): string {
  if (v === null) return '\\N';
  return String(v).replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r');
}

/** A text[] literal of the writer's U+001F-joined tags. */
function arrayLiteral(joined: string): string {
  if (joined === '') return '{}';
  return `{${joined
    .split('\u001f')
    .map((t) => `"${t.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`)
    .join(',')}}`;
}

export const COPY_COLUMNS =
  'occurred_at, ce_source, ce_id, ce_type, ce_specversion, ce_subject, ce_datacontenttype, ce_dataschema, partition_key, raw, data, extensions, broker_topic, broker_partition, broker_offset, device_id, tags, producer';

export function copyLine(r: EventInsertRow): string {
  return [
    r.occurredAt,
    r.source,
    r.id,
    r.type,
    r.specversion,
    r.subject,
    r.datacontenttype,
    r.dataschema,
    r.partitionKey,
    r.raw,
    r.data,
    r.extensions,
    r.topic,
    r.partition,
    r.offset,
    r.deviceId,
    arrayLiteral(r.tags),
    r.producer,
  ]
    .map(copyValue)
    .join('\t');
}
