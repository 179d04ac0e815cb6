#!/usr/bin/env bash
# Makes linux-arm64 executables run on this machine through qemu-user
# (Debian's qemu-user-static), as root: mounts binfmt_misc if it is not
# mounted and registers Debian's qemu-aarch64 entry
# (/usr/lib/binfmt.d/qemu-aarch64.conf) unless it is there. Then a process
# started from any arm64 program (the Node binding's spinrpc-server, npm's
# scripts) runs under qemu too, which CMake's CROSSCOMPILING_EMULATOR alone
# does not give. Idempotent; a no-op on an arm64 machine.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/usage.sh"
exit_with_help_if_asked "${BASH_SOURCE[0]}" "$@"

[[ "$(uname -m)" == aarch64 ]] && exit 0
BINFMT=/proc/sys/fs/binfmt_misc
CONF=/usr/lib/binfmt.d/qemu-aarch64.conf
[[ -e "$BINFMT/qemu-aarch64" ]] && exit 0
if [[ ! -f "$CONF" ]]; then
  echo "register-qemu.sh: $CONF is missing: install qemu-user-static (scripts/build-arm64.sh does)" >&2
  exit 1
fi
SUDO=()
[[ "$(id -u)" == 0 ]] || SUDO=(sudo)
if [[ ! -e "$BINFMT/register" ]]; then
  "${SUDO[@]}" mount -t binfmt_misc binfmt_misc "$BINFMT" || {
    echo "register-qemu.sh: cannot mount binfmt_misc at $BINFMT (a container without that privilege?): arm64 programs cannot start one another here" >&2
    exit 1
  }
fi
"${SUDO[@]}" sh -c "cat '$CONF' > '$BINFMT/register'"
echo "register-qemu.sh: qemu-aarch64 registered ($(head -1 "$BINFMT/qemu-aarch64"))"
