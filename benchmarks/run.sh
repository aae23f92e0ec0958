#!/usr/bin/env bash
# Runs one benchmark main class: ./benchmarks/run.sh AddBenchmark [args...]
# Builds what it needs first (core + benchmarks, no tests). Output ends with a "RESULT ..." line.
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:?usage: benchmarks/run.sh <AddBenchmark|IncrementalReadBenchmark|LookupBenchmark|SessionSoakBenchmark|SplitReadBenchmark|MergeScalingBenchmark> [args]}
shift
mvn -B -ntp -q -Dstyle.color=never -pl benchmarks -am package -DskipTests >/dev/null
# lance-core's Rust logger: warnings and errors, without lance-core 7.0.0's harmless line on every merge
export LANCE_LOG="${LANCE_LOG:-warn,lance::index=off}"
# lance-core 7.0.0 builds a full-text index only with a CPU pool of 2 threads (docs/lance-core-7.md); the text
# search benchmark measures search through the index unless LANCE_CPU_THREADS says otherwise
if [ "$name" = TextSearchBenchmark ]; then
  export LANCE_CPU_THREADS="${LANCE_CPU_THREADS:-2}"
fi
mkdir -p benchmarks/target/tmp
exec java ${BENCH_JAVA_OPTS:-} -Xmx4g -XX:+UseG1GC --add-opens=java.base/java.nio=ALL-UNNAMED \
  -Djava.io.tmpdir="$PWD/benchmarks/target/tmp" \
  -cp "benchmarks/target/classes:$(cat benchmarks/target/runtime-classpath.txt)" \
  "io.lancecontext.benchmarks.$name" "$@"
