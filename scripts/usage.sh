# Sourced by the scripts in scripts/: `--help` (or -h) anywhere among a
# script's arguments prints the comment at its top (the lines between the
# shebang and `set -euo pipefail`) and reports true, before any set-up,
# build or run.
#   exit_with_help_if_asked "${BASH_SOURCE[0]}" "$@"

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

# exit_with_help_if_asked SCRIPT ARGS...: prints SCRIPT's header and exits 0
# when ARGS ask for help; otherwise returns.
exit_with_help_if_asked() {
  local script="$1"
  shift
  if help_requested "$@"; then
    print_header "$script"
    exit 0
  fi
}

# exit_unless_no_arguments SCRIPT ARGS...: for a script that takes none,
# says so on stderr and exits 2 when ARGS holds any (after --help).
exit_unless_no_arguments() {
  local script="$1"
  shift
  if (($#)); then
    echo "$(basename "$script"): takes no arguments (got $1); --help says what it does" >&2
    exit 2
  fi
}
