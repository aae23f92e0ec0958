#!/usr/bin/env bash
# Runs SparkWriteReadBenchmark: ./benchmarks/spark/run.sh [rows] [upserts] [reps] [dataDir]
# (defaults 1000000 100000 2 benchmarks/spark/target/data). Builds what it needs first (no tests).
# Output ends with the "RESULT spark ..." line.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p benchmarks/spark/target/tmp
if ! mvn -B -ntp -Dstyle.color=never -pl benchmarks/spark -am package -DskipTests > benchmarks/spark/target/build.log 2>&1; then
  cat benchmarks/spark/target/build.log >&2
  exit 1
fi
# lance-core's Rust logger: warnings and errors, without lance-core 7.0.0's harmless line on every merge
export LANCE_LOG="${LANCE_LOG:-warn,lance::index=off}"
export SPARK_LOCAL_IP=127.0.0.1
exec java -Xmx6g -XX:+UseG1GC --add-opens=java.base/java.nio=ALL-UNNAMED \
  --add-opens=java.base/java.lang.invoke=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED \
  --add-opens=java.base/sun.nio.ch=ALL-UNNAMED \
  -Djava.io.tmpdir="$PWD/benchmarks/spark/target/tmp" \
  -cp "benchmarks/spark/target/classes:$(cat benchmarks/spark/target/runtime-classpath.txt)" \
  io.lancecontext.benchmarks.spark.SparkWriteReadBenchmark "${1:-1000000}" "${2:-100000}" "${3:-2}" \
  "${4:-benchmarks/spark/target/data}"
