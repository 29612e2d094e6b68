# shellcheck shell=bash
# Dependency checks of the build scripts (sourced). The packages behind them are listed in
# hack/host-packages.txt and installed by hack/host-deps.sh; these checks keep a clear message
# for a machine where that was skipped.
#
#   need cmd:NAME|file:PATH "what to install"    stop unless the command or file is there
#   deps_checked                                  with CHECK_DEPS_ONLY=1 the script ends here (the
#                                                 dependency test runs every script this way)

need() {
  local probe=$1 what=$2 ok
  case $probe in
    cmd:*) command -v "${probe#cmd:}" >/dev/null && ok=1 ;;
    file:*) [ -e "${probe#file:}" ] && ok=1 ;;
  esac
  [ -n "${ok:-}" ] && return 0
  printf '[%s] ERROR: %s is missing: %s (hack/host-deps.sh install installs every host package)\n' \
    "$(basename "$0")" "${probe#*:}" "$what" >&2
  exit 1
}

deps_checked() {
  if [ -n "${CHECK_DEPS_ONLY:-}" ]; then
    printf '[%s] dependencies present\n' "$(basename "$0")" >&2
    exit 0
  fi
}
