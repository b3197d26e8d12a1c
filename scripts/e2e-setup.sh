#!/usr/bin/env bash
# Installs what the end-to-end tests under test/e2e/ need from Debian (bookworm), only when it
# is missing:
#   - chromium               headless browser for test/e2e/Dashboard.e2e.test.ts (driven by
#                            playwright-core from npm, with executablePath /usr/bin/chromium)
#   - jupyter-nbconvert,     `jupyter nbconvert` executes examples/tour.ipynb on Deno's
#     jupyter-client         Jupyter kernel for test/e2e/Notebook.test.ts
# Needs root (or sudo) and apt. From scratch it downloads ~123 MB (61 packages, ~15 s) and unpacks
# them (measured 4m17s in all on a 2-core machine under a load average of 13; expect 1-2 minutes
# on an idle one). When everything is present it returns at once. apt's output is shown only if
# it fails.
set -euo pipefail

have() { command -v "$1" >/dev/null 2>&1; }

missing=()
have chromium || [[ -x /usr/bin/chromium ]] || missing+=(chromium)
if ! have jupyter || ! jupyter nbconvert --version >/dev/null 2>&1; then
  missing+=(jupyter-nbconvert jupyter-client)
fi

if ((${#missing[@]} == 0)); then
  echo "e2e-setup: chromium and jupyter nbconvert are installed"
  exit 0
fi

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  if have sudo; then
    SUDO=(sudo -n)
  else
    echo "e2e-setup: need root to install ${missing[*]} (apt-get install ${missing[*]})" >&2
    exit 1
  fi
fi

if ! have apt-get; then
  echo "e2e-setup: apt-get not found; install ${missing[*]} by hand" >&2
  exit 1
fi

echo "e2e-setup: installing ${missing[*]} from Debian"
start=$SECONDS
export DEBIAN_FRONTEND=noninteractive
log="$(mktemp "${TMPDIR:-/tmp}/e2e-setup.XXXXXX")"
trap 'rm -f "$log"' EXIT
quietly() {
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    echo "e2e-setup: failed: $*" >&2
    exit 1
  fi
}
quietly "${SUDO[@]}" apt-get update -qq
# --force-unsafe-io: no fsync per unpacked file (a throwaway CI machine; much faster under load).
quietly "${SUDO[@]}" apt-get install -y -qq --no-install-recommends -o Dpkg::Options::=--force-unsafe-io "${missing[@]}"
echo "e2e-setup: installed in $((SECONDS - start))s ($(chromium --version 2>/dev/null || echo 'no chromium'); nbconvert $(jupyter nbconvert --version 2>/dev/null || echo 'missing'))"
