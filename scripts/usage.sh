# Sourced by the scripts in scripts/: `--help` (or -h) anywhere among a
# script's arguments prints the comment at its top (the lines between the
# shebang and `set -euo pipefail`) and reports true, before any set-up,
# build or run.
#   if help_requested "$@"; then print_header "${BASH_SOURCE[0]}"; exit 0; fi

help_requested() {
  local arg
  for arg in "$@"; do
    [[ "$arg" == --help || "$arg" == -h ]] && return 0
  done
  return 1
}

print_header() {
  sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$1"
}
