#!/usr/bin/env bash
# Runs FlinkIngestBenchmark: ./benchmarks/flink/run.sh [rows=1000000] [rate=50000] [dir] [shards=4]
# More table options for the lancecontext runs: JAVA_OPTS=-Dflink.bench.options=write.bulk-rows=1024
# Builds what it needs first (core, the Flink connector, this module; no tests). Ends with a "RESULT flink ..." line.
set -euo pipefail
cd "$(dirname "$0")/../.."
log=benchmarks/flink/target/build.log
mkdir -p benchmarks/flink/target/tmp
if ! mvn -B -ntp -o -Dstyle.color=never -pl benchmarks/flink -am package -DskipTests >"$log" 2>&1; then
  cat "$log"
  exit 1
fi
# lance-core's Rust logger: warnings and errors, without lance-core 7.0.0's harmless line on every merge
export LANCE_LOG="${LANCE_LOG:-warn,lance::index=off}"
exec java ${JAVA_OPTS:-} -Xmx3g -XX:MaxDirectMemorySize=3g -XX:+UseG1GC --add-opens=java.base/java.nio=ALL-UNNAMED \
  --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED \
  -Djava.io.tmpdir="$PWD/benchmarks/flink/target/tmp" \
  -cp "benchmarks/flink/target/classes:$(cat benchmarks/flink/target/runtime-classpath.txt)" \
  io.lancecontext.benchmarks.flink.FlinkIngestBenchmark "$@"
