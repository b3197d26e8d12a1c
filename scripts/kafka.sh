#!/usr/bin/env bash
# A real Apache Kafka broker for the tests and the benchmark: one KRaft broker-and-controller on
# localhost, started from the server jars Maven fetches from Maven Central (scripts/kafka/pom.xml).
#
#   scripts/kafka.sh start [NAME]   start broker NAME (default "default"); prints host:port last
#   scripts/kafka.sh stop [NAME]    stop it and remove its folder (data included)
#   scripts/kafka.sh kill [NAME]    kill its process (SIGKILL) but keep its folder, port and data,
#                                   so that a later `start NAME` brings the same broker back
#   scripts/kafka.sh status [NAME]  prints host:port and exits 0 when it answers, 1 otherwise
#   scripts/kafka.sh fetch          only fetch the jars (the first run downloads ~70 MB)
#
# Each broker lives in its own folder, $TRIBUTARY_KAFKA_STATE/NAME (default
# ${TMPDIR:-/tmp}/tributary-kafka/NAME): server.properties, data/, server.log, pid, port.
# The jars are copied to $TRIBUTARY_KAFKA_CACHE (default ~/.cache/tributary-kafka/<version>);
# Maven keeps its own copy in ~/.m2. Needs only Java 17+, Maven and bash.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
POM="$HERE/kafka/pom.xml"
LOG4J="$HERE/kafka/log4j2.xml"
VERSION="$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$POM")"
CACHE="${TRIBUTARY_KAFKA_CACHE:-$HOME/.cache/tributary-kafka/$VERSION}"
STATE_ROOT="${TRIBUTARY_KAFKA_STATE:-${TMPDIR:-/tmp}/tributary-kafka}"
# The plugin is named with its version: Maven 3's default maven-dependency-plugin (2.8) pulls
# hundreds of old artifacts of its own before it copies anything.
DEPENDENCY_PLUGIN="org.apache.maven.plugins:maven-dependency-plugin:3.8.1"

log() { echo "kafka.sh: $*" >&2; }
die() {
  log "$*"
  exit 1
}

fetch() {
  local stamp="$CACHE/.complete"
  local want
  want="$(sha1sum "$POM" | cut -d' ' -f1)"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then return 0; fi
  command -v mvn >/dev/null || die "Maven (mvn) is needed to fetch the Kafka jars"
  log "fetching Apache Kafka $VERSION jars with Maven into $CACHE/libs"
  rm -rf "$CACHE/libs"
  mkdir -p "$CACHE"
  # Maven's quiet mode still prints colour resets; they are stripped from its output.
  mvn -B -q -Dstyle.color=never -f "$POM" "$DEPENDENCY_PLUGIN:copy-dependencies" \
    -DoutputDirectory="$CACHE/libs" -DincludeScope=runtime 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >&2 ||
    die "Maven could not fetch the Kafka jars (see above)"
  echo "$want" >"$stamp"
}

# A free TCP port on localhost: random candidates until nothing answers on one.
free_port() {
  local p
  for _ in $(seq 1 200); do
    p=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"
      return 0
    fi
  done
  die "no free port found"
}

answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

running() {
  local dir="$1"
  [[ -f "$dir/pid" ]] && kill -0 "$(cat "$dir/pid")" 2>/dev/null
}

start() {
  local name="$1"
  local dir="$STATE_ROOT/$name"
  fetch
  command -v java >/dev/null || die "Java 17+ is needed to run Kafka"
  if running "$dir"; then
    echo "localhost:$(cat "$dir/port")"
    return 0
  fi
  mkdir -p "$dir"
  local cp="$CACHE/libs/*"
  if [[ ! -f "$dir/server.properties" ]]; then
    local port cport
    port="$(free_port)"
    cport="$(free_port)"
    while [[ "$cport" == "$port" ]]; do cport="$(free_port)"; done
    cat >"$dir/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@localhost:$cport
listeners=PLAINTEXT://localhost:$port,CONTROLLER://localhost:$cport
advertised.listeners=PLAINTEXT://localhost:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$dir/data
num.partitions=1
auto.create.topics.enable=true
delete.topic.enable=true
# One broker: every internal topic has one replica, and few partitions so that the group and
# transaction coordinators are ready at once.
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
# Tests delete records and let retention act; check often.
log.retention.check.interval.ms=1000
log.segment.delete.delay.ms=0
log.initial.task.delay.ms=0
EOF
    echo "$port" >"$dir/port"
    local cluster
    # A random base64url UUID; passed as --cluster-id=… because it may start with "-".
    cluster="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | cut -c1-22)"
    java -Xmx256m -XX:TieredStopAtLevel=1 -cp "$cp" -Dlog4j2.configurationFile="$LOG4J" kafka.tools.StorageTool format \
      --cluster-id="$cluster" --config="$dir/server.properties" >"$dir/format.log" 2>&1 ||
      die "formatting KRaft storage failed: $(cat "$dir/format.log")"
  fi
  local port
  port="$(cat "$dir/port")"
  answers "$port" && die "port $port of broker '$name' is taken by another process"
  : >"$dir/server.log"
  # setsid: the broker outlives the shell (and the test runner) that started it; stop/kill end it.
  # C1 only (TieredStopAtLevel=1): the broker starts about twice as fast on a loaded machine, and
  # test traffic is small. KAFKA_JVM_OPTS adds or overrides flags.
  # shellcheck disable=SC2086
  setsid java -Xmx512m -Xms256m -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:TieredStopAtLevel=1 ${KAFKA_JVM_OPTS:-} \
    -Djava.awt.headless=true -Dlog4j2.configurationFile="$LOG4J" \
    -cp "$cp" kafka.Kafka "$dir/server.properties" >>"$dir/server.log" 2>&1 </dev/null &
  echo $! >"$dir/pid"
  local deadline=$((SECONDS + 90))
  until grep -q "Kafka Server started" "$dir/server.log" 2>/dev/null && answers "$port"; do
    if ! running "$dir"; then
      die "broker '$name' exited while starting; its log:
$(tail -n 40 "$dir/server.log")"
    fi
    ((SECONDS < deadline)) || die "broker '$name' did not start within 90 s; its log:
$(tail -n 40 "$dir/server.log")"
    sleep 0.2
  done
  echo "localhost:$port"
}

kill_broker() {
  local dir="$1" signal="$2"
  if running "$dir"; then
    local pid
    pid="$(cat "$dir/pid")"
    kill "-$signal" "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$dir/pid"
}

cmd="${1:-}"
name="${2:-default}"
[[ "$name" =~ ^[A-Za-z0-9_-]+$ ]] || die "broker name must be letters, digits, - or _: '$name'"
dir="$STATE_ROOT/$name"
case "$cmd" in
fetch) fetch ;;
start) start "$name" ;;
stop)
  kill_broker "$dir" TERM
  rm -rf "$dir"
  ;;
kill) kill_broker "$dir" KILL ;;
status)
  if running "$dir" && answers "$(cat "$dir/port")"; then echo "localhost:$(cat "$dir/port")"; else exit 1; fi
  ;;
*)
  echo "usage: scripts/kafka.sh start|stop|kill|status [NAME] | fetch" >&2
  exit 2
  ;;
esac
