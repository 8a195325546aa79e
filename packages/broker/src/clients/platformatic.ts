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
  library ??= requireOptional<typeof Platformatic>(PACKAGE);
  return library;
}

/** `require(name)`; when it is not installed, an error that names it and the setting that needs it. */
export function requireOptional<T>(name: string): T {
  try {
    return createRequire(import.meta.url)(name) as T;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw error;
    throw new Error(
      `KAFKA_CLIENT=platformatic needs ${name} installed (an optional peer dependency of @event-observatory/broker; the images ship kafkajs only)`,
      { cause: error },
    );
  }
}
