#!/bin/bash
# The stand-in for apache/kafka's /etc/kafka/docker/run: the broker's settings from KAFKA_*
# variables (KAFKA_LOG_DIRS -> log.dirs; `__` -> `_`, `___` -> `-`, as the official image reads
# them), the storage formatted once with CLUSTER_ID, then the broker in the foreground.
set -euo pipefail
config=/opt/kafka/config/server.properties
: >"$config"
while IFS='=' read -r name value; do
  case $name in KAFKA_HEAP_OPTS | KAFKA_OPTS | KAFKA_JVM_PERFORMANCE_OPTS | KAFKA_VERSION) continue ;; esac
  key=${name#KAFKA_}
  key=${key//___/-}
  key=${key//__/@}
  key=${key//_/.}
  key=${key//@/_}
  echo "${key,,}=$value" >>"$config"
done < <(env | grep -E '^KAFKA_[A-Z0-9_]+=')
: "${CLUSTER_ID:=5L6g3nShT-eMCtK--X86sw}"
classpath='/opt/kafka/libs/*'
java -cp "$classpath" -Dlog4j2.configurationFile=/opt/kafka/log4j2.properties kafka.tools.StorageTool \
  format --ignore-formatted -t "$CLUSTER_ID" -c "$config" >/dev/null
# shellcheck disable=SC2086 # the options are word lists, as in kafka-run-class.sh
exec java ${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m} ${KAFKA_JVM_PERFORMANCE_OPTS:--XX:+UseG1GC -XX:MaxGCPauseMillis=20} \
  ${KAFKA_OPTS:-} -Djava.awt.headless=true -Dlog4j2.configurationFile=/opt/kafka/log4j2.properties \
  -cp "$classpath" kafka.Kafka "$config"
