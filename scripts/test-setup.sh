#!/usr/bin/env bash
# What `npm test` needs from the machine, installed or generated when it is missing (the first
# step of `npm test`, also `npm run test:setup`); when everything is there it returns at once.
#
#   Java 17+ and Maven        the Kafka broker (scripts/kafka.sh) and the Spark Connect server
#                             (scripts/spark-connect.sh) that vitest's global setups start run
#                             on Java; Maven fetches their jars from Maven Central
#                             (Debian: openjdk-17-jre-headless, maven)
#   chromium                  headless browser for test/e2e/Dashboard.e2e.test.ts (driven by
#                             playwright-core from npm, executablePath /usr/bin/chromium)
#   jupyter-nbconvert,        `jupyter nbconvert` executes examples/tour.ipynb on Deno's Jupyter
#   jupyter-client            kernel for test/e2e/Notebook.test.ts
#   connect/gen/              the Spark Connect client's protocol code, generated from the .proto
#                             files in Spark's jars (scripts/spark-connect.sh proto)
#
# Debian packages need root (or passwordless sudo) and apt-get; without them this stops with one
# line naming the packages to install. From scratch the Debian part downloads ~200 MB (a minute or
# two on an idle 2-core machine, more under load). apt's output is shown only if it fails.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

have() { command -v "$1" >/dev/null 2>&1; }
log() { echo "test-setup: $*"; }

# The major version of the `java` on the PATH (1.8 -> 8, 17.0.2 -> 17), or 0 without one.
java_major() {
  have java || {
    echo 0
    return
  }
  local v
  v="$(java -version 2>&1 | sed -nE 's/.*version "([0-9]+)(\.([0-9]+))?.*/\1 \3/p' | head -n 1)"
  set -- $v
  if [[ "${1:-0}" == 1 ]]; then echo "${2:-0}"; else echo "${1:-0}"; fi
}

missing=()
(($(java_major) >= 17)) || missing+=(openjdk-17-jre-headless)
have mvn || missing+=(maven)
have chromium || [[ -x /usr/bin/chromium ]] || missing+=(chromium)
if ! have jupyter || ! jupyter nbconvert --version >/dev/null 2>&1; then
  missing+=(jupyter-nbconvert jupyter-client)
fi

if ((${#missing[@]} > 0)); then
  SUDO=()
  if [[ $(id -u) -ne 0 ]]; then
    if have sudo && sudo -n true 2>/dev/null; then
      SUDO=(sudo -n)
    else
      echo "test-setup: the tests need ${missing[*]}; installing them needs root: run 'sudo apt-get install ${missing[*]}' (or this script as root), then npm test again" >&2
      exit 1
    fi
  fi
  if ! have apt-get; then
    echo "test-setup: the tests need ${missing[*]} (Debian package names) and apt-get is not here: install them by hand, then npm test again" >&2
    exit 1
  fi
  log "installing ${missing[*]} from Debian"
  start=$SECONDS
  export DEBIAN_FRONTEND=noninteractive
  out="$(mktemp "${TMPDIR:-/tmp}/test-setup.XXXXXX")"
  trap 'rm -f "$out"' EXIT
  quietly() {
    if ! "$@" >"$out" 2>&1; then
      cat "$out" >&2
      echo "test-setup: failed: $*" >&2
      exit 1
    fi
  }
  quietly "${SUDO[@]}" apt-get update -qq
  # --force-unsafe-io: no fsync per unpacked file (much faster on a loaded machine).
  quietly "${SUDO[@]}" apt-get install -y -qq --no-install-recommends -o Dpkg::Options::=--force-unsafe-io "${missing[@]}"
  log "installed in $((SECONDS - start))s"
fi

# connect/gen/: a no-op when it is current.
bash "$HERE/spark-connect.sh" proto
log "java $(java_major), $(mvn -B -v 2>/dev/null | head -n 1 | cut -d' ' -f1-3), $(chromium --version 2>/dev/null || echo 'no chromium'), nbconvert $(jupyter nbconvert --version 2>/dev/null || echo 'missing'), connect/gen ready"
