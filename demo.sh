#!/usr/bin/env bash
# The quickstart demo: one shell function per step (core, then each engine), called in order at the bottom.
# Each step builds its own module (first run downloads dependencies from Maven Central) and runs it with
# plain java on that module's class path, so engines never share a class path with the core demo.
set -euo pipefail
cd "$(dirname "$0")"
jv=$(java -version 2>&1)
case "$jv" in
  *'version "17'*) ;;
  *) echo "warning: lancecontext is built and tested on JDK 17 (found: ${jv%%$'\n'*})" >&2 ;;
esac
# lance-core's Rust logger: warnings and errors, without lance-core 7.0.0's harmless line on every merge
export LANCE_LOG="${LANCE_LOG:-warn,lance::index=off}"
store_root="${1:-demo-store}"

# build_module <module dir>: mvn package of that module and what it needs, no tests.
# Maven's console library writes color resets even in batch mode: keep its output in a log, shown on failure.
build_module() {
  local module=$1
  echo "building $module (mvn package, no tests)..."
  mkdir -p "$module/target/tmp"
  if ! mvn -B -ntp -q -Dstyle.color=never -pl "$module" -am package -DskipTests > "$module/target/demo-build.log" 2>&1; then
    cat "$module/target/demo-build.log" >&2
    exit 1
  fi
}

# run_module <module dir> <main class> [args...]: plain java on the module's runtime class path.
# lance-core extracts its native library (~170 MiB) into java.io.tmpdir: keep it under target/.
run_module() {
  local module=$1 main=$2
  shift 2
  java -Xmx2g --add-opens=java.base/java.nio=ALL-UNNAMED -Djava.io.tmpdir="$PWD/$module/target/tmp" \
    ${DEMO_JVM_FLAGS:-} -cp "$module/target/classes:$(cat "$module/target/runtime-classpath.txt")" "$main" "$@"
}

demo_core() {
  echo "== core: a local rollout store =="
  build_module examples
  run_module examples io.lancecontext.examples.QuickstartDemo "$store_root"
}

# Spark's JVM needs these opened (Arrow's java.nio is opened for every step)
SPARK_JVM_FLAGS="--add-opens=java.base/java.lang.invoke=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED"

demo_spark() {
  echo "== spark: a local Spark job writes 200,000 rollouts, Spark SQL summarises them =="
  build_module examples/spark
  SPARK_LOCAL_IP=127.0.0.1 DEMO_JVM_FLAGS="$SPARK_JVM_FLAGS" \
    run_module examples/spark io.lancecontext.examples.spark.SparkRolloutDemo "$store_root-spark" 200000
}

FLINK_JVM_FLAGS="--add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED"

demo_flink() {
  echo "== flink: a local Flink SQL job streams 50,000 context records, enriched by a lookup join on the Spark step's rollouts =="
  build_module examples/flink
  DEMO_JVM_FLAGS="$FLINK_JVM_FLAGS" \
    run_module examples/flink io.lancecontext.examples.flink.FlinkContextDemo "$store_root-flink" 50000 "$store_root-spark"
}

demo_core
demo_spark
demo_flink
