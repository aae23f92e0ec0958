# The demo's Flink step, for demo.sh to source: `source examples/flink/demo-step.sh; flink_step "$store_root"`.
# Run from the repository root. Builds examples/flink and what it needs (no tests; Maven's output goes to a log,
# shown on failure), then runs FlinkContextDemo with plain java on that module's class path: a local Flink SQL job
# streams 50,000 context records into <store_root>-flink, enriched by a lookup join on the Spark step's rollout
# store <store_root>-spark when it is there (otherwise on a small rollout store of its own).
# DEMO_MVN_FLAGS adds Maven flags (for example -o); DEMO_FLINK_RECORDS changes the record count.

flink_step() {
  local root=${1:-${store_root:-demo-store}}
  local module=examples/flink
  echo "== flink: a local Flink SQL job streams ${DEMO_FLINK_RECORDS:-50000} context records, enriched by a lookup join =="
  echo "building $module (mvn package, no tests)..."
  mkdir -p "$module/target/tmp"
  # shellcheck disable=SC2086
  if ! mvn -B -ntp -Dstyle.color=never ${DEMO_MVN_FLAGS:-} -pl "$module" -am package -DskipTests \
      > "$module/target/demo-build.log" 2>&1; then
    cat "$module/target/demo-build.log" >&2
    return 1
  fi
  # lance-core's Rust logger: warnings and errors, without lance-core 7.0.0's harmless line on every merge
  LANCE_LOG="${LANCE_LOG:-warn,lance::index=off}" \
    java -Xmx2g --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED \
    --add-opens=java.base/java.util=ALL-UNNAMED -Djava.io.tmpdir="$PWD/$module/target/tmp" \
    -cp "$module/target/classes:$(cat "$module/target/runtime-classpath.txt")" \
    io.lancecontext.examples.flink.FlinkContextDemo "$root-flink" "${DEMO_FLINK_RECORDS:-50000}" "$root-spark"
}
