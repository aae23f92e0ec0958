#!/usr/bin/env bash
# The quickstart demo on the embedded default: a local rollout store under ./demo-store.
# Builds what it needs (first run downloads dependencies from Maven Central), then runs it.
set -euo pipefail
cd "$(dirname "$0")"
jv=$(java -version 2>&1)
case "$jv" in
  *'version "17'*) ;;
  *) echo "warning: lancecontext is built and tested on JDK 17 (found: ${jv%%$'\n'*})" >&2 ;;
esac
echo "building (mvn package, no tests)..."
mkdir -p examples/target
# Maven's console library writes color resets even in batch mode: keep its output in a log, shown on failure
if ! mvn -B -ntp -q -Dstyle.color=never -pl examples -am package -DskipTests > examples/target/demo-build.log 2>&1; then
  cat examples/target/demo-build.log >&2
  exit 1
fi
# lance-core's Rust logger: warnings and errors, without lance-core 7.0.0's harmless line on every merge
export LANCE_LOG="${LANCE_LOG:-warn,lance::index=off}"
mkdir -p examples/target/tmp
# lance-core extracts its native library (~170 MiB) into java.io.tmpdir: keep it under target/
exec java -Xmx2g --add-opens=java.base/java.nio=ALL-UNNAMED -Djava.io.tmpdir="$PWD/examples/target/tmp" \
  -cp "examples/target/classes:$(cat examples/target/runtime-classpath.txt)" \
  io.lancecontext.examples.QuickstartDemo "${1:-demo-store}"
