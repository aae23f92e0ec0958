#!/usr/bin/env bash
# Installs what the notebooks in this folder run on: Jupyter, and the Jupyter kernel "Java (lancecontext)"
# (kernelspec name lancecontext-java). Run it once from anywhere in the clone; run it again after `mvn clean`
# or when the build's dependencies change. Then: jupyter notebook notebooks/
#
# The kernel. JJava is the Java kernel for Jupyter, but of its Maven artifacts only
# org.dflib.jjava:jjava-jupyter:1.0-a6 is served by the repository this project builds from, and that one is
# JJava's protocol library (ZeroMQ sockets, message signing, output streams, display data: "intended for
# building language-specific kernels", its POM says), with no main class. The kernel proper (jjava-kernel, the
# jjava-distro launcher) is not served. So the kernel is this module's io.lancecontext.notebooks.LanceKernel: a
# subclass of jjava-jupyter's BaseKernel that runs cells as JShell snippets in its own JVM (JDK 17), on the
# notebooks module's class path (lancecontext-core, lancecontext-spark, Spark, JFreeChart). Its kernel.json
# (written by io.lancecontext.notebooks.KernelSpec) runs `java` with Arrow's
# --add-opens=java.base/java.nio=ALL-UNNAMED and the rest of spark-submit's JDK 17 flags, -cp that class path,
# LanceKernel and {connection_file}.
#
# Steps:
#   1. Jupyter, when `jupyter nbconvert` is missing: as root with apt-get, Debian's jupyter-notebook and
#      jupyter-nbconvert; otherwise it says what to install and stops.
#   2. Builds the notebooks module and the modules it needs (mvn package -DskipTests; nothing is installed into
#      ~/.m2), which writes notebooks/target/kernel.classpath.
#   3. Writes the kernelspec into the user's Jupyter kernels ($(jupyter --data-dir)/kernels/lancecontext-java).
#
# Usage: notebooks/install-kernel.sh [--for-tests]
#   --for-tests  step 1 only, with jupyter-nbconvert alone (what NotebooksTest needs to execute the notebooks
#                headless; it writes a kernelspec of its own from the build). .ci/run runs this.
set -euo pipefail
cd "$(dirname "$0")/.."

for_tests=false
case "${1:-}" in
  --for-tests) for_tests=true ;;
  "") ;;
  *) echo "usage: $0 [--for-tests]" >&2; exit 2 ;;
esac

if $for_tests; then
  packages=(jupyter-nbconvert)
  have() { jupyter nbconvert --version >/dev/null 2>&1; }
else
  packages=(jupyter-notebook jupyter-nbconvert)
  have() { jupyter nbconvert --version >/dev/null 2>&1 && jupyter notebook --version >/dev/null 2>&1; }
fi

# 1. Jupyter
if have; then
  echo "jupyter: found $(command -v jupyter) (nbconvert $(jupyter nbconvert --version 2>/dev/null))"
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  start=$SECONDS
  log=$(mktemp)
  export DEBIAN_FRONTEND=noninteractive
  apt_install() { apt-get install -y -q --no-install-recommends "${packages[@]}" >>"$log" 2>&1; }
  # a fresh machine's package lists may be missing or stale: update once, only when the install needs it
  if ! apt_install && ! { apt-get update -q >>"$log" 2>&1 && apt_install; }; then
    tail -20 "$log" >&2
    echo "error: apt-get could not install ${packages[*]} (log: $log)" >&2
    exit 1
  fi
  rm -f "$log"
  have || { echo "error: installed ${packages[*]}, but 'jupyter nbconvert' still does not run" >&2; exit 1; }
  echo "jupyter: installed ${packages[*]} with apt-get in $(( SECONDS - start )) s"
else
  echo "error: Jupyter is missing. Install it, then run this again:" >&2
  echo "  Debian/Ubuntu: sudo apt-get install ${packages[*]}" >&2
  echo "  elsewhere:     pip install notebook nbconvert" >&2
  exit 1
fi
$for_tests && exit 0

# 2. The kernel's class path, from the build (JDK 17: Spark 4.1 needs it, and the kernel runs on this java)
if [ -z "${JAVA_HOME:-}" ] && [ -x /usr/lib/jvm/java-17-openjdk-amd64/bin/java ]; then
  export JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64
fi
java=${JAVA_HOME:+$JAVA_HOME/bin/}java
case "$("$java" -version 2>&1)" in
  *'version "17'*) ;;
  *) echo "error: the kernel needs JDK 17 ($java is not); set JAVA_HOME to a JDK 17" >&2; exit 1 ;;
esac
echo "building the notebooks module and what it needs (mvn package -DskipTests) ..."
mvn -B -ntp -q -pl notebooks -am package -DskipTests
classpath="$PWD/notebooks/target/classes:$(cat notebooks/target/kernel.classpath)"

# 3. The kernelspec, in the user's Jupyter data folder (what `jupyter kernelspec install --user` does; Debian
# ships that command in another package, jupyter-client)
spec="$(jupyter --data-dir)/kernels/lancecontext-java"
"$java" -cp "$classpath" io.lancecontext.notebooks.KernelSpec "$spec" >/dev/null
echo "kernel 'Java (lancecontext)' installed in $spec"
echo "start Jupyter with: jupyter notebook notebooks/"
