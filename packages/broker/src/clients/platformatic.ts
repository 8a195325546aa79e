/**
 * `@platformatic/kafka`, loaded on first use. It is an optional peer dependency: kafkajs is the
 * library the services ship with (issue 18's measurements, packages/broker/README.md), so the
 * images leave it out, and a kafkajs service never pays its load (its option schemas compile at
 * import: 0.76 s of a consumer's boot in a CPU profile). `KAFKA_CLIENT=platformatic` needs it
 * installed; without it this names the missing package instead of a bare resolution error.
 */
import { createRequire } from 'node:module';
import type * as Platformatic from '@platformatic/kafka';

const PACKAGE = '@platformatic/kafka';
let library: typeof Platformatic | undefined;

export function platformaticKafka(): typeof Platformatic {
  if (library) return library;
  try {
    library = createRequire(import.meta.url)(PACKAGE) as typeof Platformatic;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw error;
    throw new Error(
      `KAFKA_CLIENT=platformatic needs ${PACKAGE} installed (an optional peer dependency of @event-observatory/broker; the images ship kafkajs only)`,
      { cause: error },
    );
  }
  return library;
}
