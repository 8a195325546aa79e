#!/bin/bash
# The stand-in for apache/kafka's /opt/kafka/bin/kafka-configs.sh (the chart's bundled broker sets
# its SCRAM user with it): the tool's class on the broker's jars, with KAFKA_HEAP_OPTS as
# kafka-run-class.sh reads it. No LOG_DIR (that script's log folder): the tool logs to the console.
set -euo pipefail
# shellcheck disable=SC2086 # a word list, as in kafka-run-class.sh
exec java ${KAFKA_HEAP_OPTS:--Xmx256M} -Djava.awt.headless=true \
  -Dlog4j2.configurationFile=/opt/kafka/log4j2.properties -cp '/opt/kafka/libs/*' \
  org.apache.kafka.tools.ConfigCommand "$@"
