#!/usr/bin/env bash
# A real single-node Apache Kafka broker (KRaft: broker + controller in one JVM) on
# 127.0.0.1, for development, tests and CI. No Docker, no apache.org download: the broker's
# jars come from Maven Central through mvn and are cached.
#
#   scripts/kafka.sh start     fetch jars if needed, format storage once, start, wait until ready
#   scripts/kafka.sh start --fresh   the same on empty storage when no broker runs (a running
#                              one is kept): what the test session and the benchmarks use, so
#                              topics of earlier runs do not pile up (each run names its own)
#   scripts/kafka.sh stop      TERM, then KILL after 20 s; idempotent
#   scripts/kafka.sh status    exit 0 if running (pid alive, port answers), 3 if not
#   scripts/kafka.sh logs [N]  last N (default 100) lines of the broker log
#
# Environment (defaults in brackets):
#   DUSTONLINE_KAFKA_PORT [9092]             client listener, PLAINTEXT://127.0.0.1:PORT
#   DUSTONLINE_KAFKA_CONTROLLER_PORT [9093]  KRaft controller listener
#   DUSTONLINE_KAFKA_HOME [~/.cache/dustonline/kafka]  jar cache: <home>/<version>/libs
#   DUSTONLINE_KAFKA_RUN [<repo>/.kafka]     config, data (log.dirs), pid file, kafka.log
#   DUSTONLINE_KAFKA_HEAP_OPTS [-Xms256m -Xmx512m]
#   DUSTONLINE_KAFKA_START_TIMEOUT [90]      seconds to wait for the broker to answer
set -euo pipefail

# 3.9.x: the last line that keeps every old protocol version (4.0 dropped the pre-2.1 ones,
# KIP-896), so old clients work too; KRaft without ZooKeeper; logs through reload4j.
VERSION=3.9.1
SCALA=2.13
SLF4J=1.7.36   # the slf4j-api version kafka 3.9 is built against

REPO=$(cd "$(dirname "$0")/.." && pwd)
PORT=${DUSTONLINE_KAFKA_PORT:-9092}
CPORT=${DUSTONLINE_KAFKA_CONTROLLER_PORT:-9093}
LIBS=${DUSTONLINE_KAFKA_HOME:-$HOME/.cache/dustonline/kafka}/$VERSION/libs
RUN=${DUSTONLINE_KAFKA_RUN:-$REPO/.kafka}
HEAP=${DUSTONLINE_KAFKA_HEAP_OPTS:--Xms256m -Xmx512m}
TIMEOUT=${DUSTONLINE_KAFKA_START_TIMEOUT:-90}
PIDFILE=$RUN/kafka.pid
LOG=$RUN/kafka.log

die() { echo "kafka.sh: $*" >&2; exit 1; }

# The pid from the pid file if that process is alive and is our broker, else nothing.
pid() {
  local p
  p=$(cat "$PIDFILE" 2>/dev/null) || return 0
  if [ -n "$p" ] && tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q 'kafka\.Kafka'; then
    echo "$p"
  fi
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Jars from Maven Central: a throwaway pom, `mvn dependency:copy-dependencies`, then an
# atomic move into the cache so an interrupted fetch never leaves a half-filled cache.
fetch_jars() {
  [ -f "$LIBS/kafka_$SCALA-$VERSION.jar" ] && return 0
  command -v mvn >/dev/null || die "could not fetch Kafka jars from Maven Central: mvn is not installed"
  tmp=$(mktemp -d)   # global: the EXIT trap runs after this function has returned
  trap 'rm -rf "$tmp"' EXIT
  echo "fetching Kafka $VERSION jars from Maven Central into $LIBS ..."
  cat >"$tmp/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.dustonline</groupId><artifactId>kafka-jars</artifactId><version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_$SCALA</artifactId><version>$VERSION</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-reload4j</artifactId><version>$SLF4J</version></dependency>
  </dependencies>
</project>
EOF
  if ! (cd "$tmp" && mvn -q -B -Dstyle.color=never org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies \
          -DincludeScope=runtime -DoutputDirectory="$tmp/libs") >"$tmp/mvn.log" 2>&1; then
    sed 's/\x1b\[[0-9;]*m//g' "$tmp/mvn.log" | tail -n 20 >&2   # without colour codes
    die "could not fetch Kafka jars from Maven Central with mvn (output above)"
  fi
  [ -f "$tmp/libs/kafka_$SCALA-$VERSION.jar" ] || die "could not fetch Kafka jars from Maven Central with mvn: kafka_$SCALA-$VERSION.jar missing"
  mkdir -p "$(dirname "$LIBS")"
  rm -rf "$LIBS" && mv "$tmp/libs" "$LIBS"
}

write_config() {
  mkdir -p "$RUN/data"
  cat >"$RUN/server.properties" <<EOF
# Written by scripts/kafka.sh on every start; edits here are lost.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$CPORT
listeners=PLAINTEXT://127.0.0.1:$PORT,CONTROLLER://127.0.0.1:$CPORT
advertised.listeners=PLAINTEXT://127.0.0.1:$PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$RUN/data
num.partitions=4
auto.create.topics.enable=true
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
# compacted topics need the cleaner; a smaller dedupe buffer fits the small heap
log.cleaner.enable=true
log.cleaner.dedupe.buffer.size=33554432
EOF
  # log4j 1 (reload4j) config: everything INFO and up into kafka.log via stdout
  cat >"$RUN/log4j.properties" <<EOF
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
EOF
}

# shellcheck disable=SC2206  # HEAP is a list of JVM flags
JAVA=(java $HEAP -XX:+UseG1GC -Djava.awt.headless=true
      -Dlog4j.configuration="file:$RUN/log4j.properties" -cp "$LIBS/*")

wait_ready() {
  local p=$1 t=0
  until port_open "$PORT" && grep -q 'Kafka Server started' "$LOG"; do
    if ! kill -0 "$p" 2>/dev/null; then
      rm -f "$PIDFILE"; tail -n 40 "$LOG" >&2
      die "broker (pid $p) exited during startup; log: $LOG"
    fi
    if [ "$t" -ge "$TIMEOUT" ]; then
      tail -n 40 "$LOG" >&2
      die "broker (pid $p) did not answer on 127.0.0.1:$PORT within ${TIMEOUT}s; log: $LOG (still running: scripts/kafka.sh stop)"
    fi
    sleep 1; t=$((t + 1))
  done
}

start() {
  local p
  p=$(pid)
  if [ -n "$p" ]; then
    wait_ready "$p"
    echo "kafka already running: pid $p, 127.0.0.1:$PORT, log $LOG"
    return 0
  fi
  rm -f "$PIDFILE"
  command -v java >/dev/null || die "java is not installed (Kafka $VERSION needs Java 11+)"
  for port in "$PORT" "$CPORT"; do
    port_open "$port" && die "127.0.0.1:$port is already in use by another process"
  done
  fetch_jars
  write_config
  # no broker runs on it: earlier runs' topics go (a broker slows down as they pile up)
  [ "${1:-}" = "--fresh" ] && rm -rf "$RUN/data"
  # Format storage once; meta.properties marks a formatted log dir, so restarts keep data.
  if [ ! -f "$RUN/data/meta.properties" ]; then
    local id
    id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')  # 22-char base64url uuid
    "${JAVA[@]}" kafka.tools.StorageTool format --cluster-id="$id" -c "$RUN/server.properties" >"$RUN/format.log" 2>&1 \
      || { cat "$RUN/format.log" >&2; die "formatting storage in $RUN/data failed"; }
  fi
  [ -f "$LOG" ] && mv -f "$LOG" "$LOG.prev"   # a fresh log per run; the previous one is kept
  # setsid: the broker outlives this shell and its process group (CI steps, Ctrl-C)
  setsid "${JAVA[@]}" kafka.Kafka "$RUN/server.properties" </dev/null >"$LOG" 2>&1 &
  echo $! >"$PIDFILE"
  echo "starting kafka $VERSION: pid $!, 127.0.0.1:$PORT, log $LOG"
  wait_ready "$!"
  echo "kafka ready on 127.0.0.1:$PORT"
}

stop() {
  local p t=0
  p=$(pid)
  if [ -z "$p" ]; then
    rm -f "$PIDFILE"; echo "kafka not running"; return 0
  fi
  kill -TERM "$p" 2>/dev/null || true
  while kill -0 "$p" 2>/dev/null && [ "$t" -lt 20 ]; do sleep 1; t=$((t + 1)); done
  if kill -0 "$p" 2>/dev/null; then
    echo "kafka (pid $p) ignored TERM for 20 s; killing"; kill -KILL "$p" 2>/dev/null || true
  fi
  rm -f "$PIDFILE"
  echo "kafka stopped (pid $p)"
}

status() {
  local p
  p=$(pid)
  if [ -n "$p" ] && port_open "$PORT"; then
    echo "kafka running: pid $p, 127.0.0.1:$PORT, log $LOG"; return 0
  elif [ -n "$p" ]; then
    echo "kafka not answering: pid $p alive but 127.0.0.1:$PORT closed (starting?), log $LOG"; return 3
  fi
  echo "kafka not running (port $PORT)"; return 3
}

case "${1:-}" in
  start) start "${2:-}" ;;
  stop) stop ;;
  status) status ;;
  logs) tail -n "${2:-100}" "$LOG" ;;
  *) echo "usage: $0 start|stop|status|logs [N]" >&2; exit 2 ;;
esac
