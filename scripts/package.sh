#!/usr/bin/env bash
# Builds every addon this machine can build (this machine's natively with
# scripts/build.sh, linux-arm64 with scripts/build-arm64.sh) and writes the
# npm packages into dist/npm/: spinrpc-<version>.tgz, the platform-free main
# package, and spinrpc-linux-<cpu>-gnu-<version>.tgz, one per platform
# package @spinrpc/linux-<cpu>-gnu (docs/NODE.md, "Platforms").
#   --check  then installs the main package with typescript@7.0.2 into a
#            fresh project for each of linux-x64-gnu, linux-arm64-gnu (npm
#            run by the arm64 Node under qemu), linux-x64-musl, darwin-arm64
#            and win32-x64, the platform packages resolved from dist/npm/
#            (no registry), says per platform what got installed, and on
#            linux-x64 and linux-arm64 runs the sync API through the binding
#            under SPINRPC_BINDING=required.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/usage.sh"
exit_with_help_if_asked "${BASH_SOURCE[0]}" "$@"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
check=0
for arg in "$@"; do
  case "$arg" in
    --check) check=1 ;;
    *) echo "package.sh: unknown argument $arg (--help says what it takes)" >&2; exit 2 ;;
  esac
done

bash "$ROOT/scripts/build.sh"
bash "$ROOT/scripts/build-arm64.sh"
node "$ROOT/scripts/package.mjs" pack --all
if ((check)); then
  SPINRPC_SETUP_ARM64=1 bash "$ROOT/scripts/setup.sh" >/dev/null
  bash "$ROOT/scripts/register-qemu.sh"
  node "$ROOT/scripts/package.mjs" check
fi
