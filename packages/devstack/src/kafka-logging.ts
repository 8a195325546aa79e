/**
 * The broker's console logging: warnings, plus the lines saying it started or stopped. Kafka 4 logs
 * with log4j2 (properties syntax, which log4j-core reads without extra parsers); 3.x with reload4j.
 */
import { usesLog4j2 } from './kafka-dist.js';

export interface LoggingConfig {
  fileName: string;
  /** JVM system property naming the file. */
  systemProperty: string;
  contents: string;
}

const LOG4J2 = `# Quiet console logging for the devstack broker: warnings, plus the lines saying it started/stopped.
status = warn
# The broker stops on SIGTERM through its own hook; log4j2's would close the appender before its last lines.
shutdownHook = disable
appender.stdout.type = Console
appender.stdout.name = STDOUT
appender.stdout.layout.type = PatternLayout
appender.stdout.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.stdout.ref = STDOUT
logger.raft.name = kafka.server.KafkaRaftServer
logger.raft.level = INFO
logger.kafka.name = kafka.Kafka$
logger.kafka.level = INFO
logger.network.name = org.apache.kafka.clients.NetworkClient
logger.network.level = ERROR
`;

const LOG4J = `# Quiet console logging for the devstack broker: warnings, plus the lines saying it started/stopped.
log4j.rootLogger=WARN, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.server.KafkaRaftServer=INFO
log4j.logger.kafka.Kafka$=INFO
log4j.logger.org.apache.kafka.clients.NetworkClient=ERROR
`;

export function loggingConfig(version: string): LoggingConfig {
  return usesLog4j2(version)
    ? { fileName: 'log4j2.properties', systemProperty: 'log4j2.configurationFile', contents: LOG4J2 }
    : { fileName: 'log4j.properties', systemProperty: 'log4j.configuration', contents: LOG4J };
}
