#!/usr/bin/env bash
# Builds tokendiet and installs it as a systemd service:
#   PREFIX/bin/tokendiet                         the binary
#   /etc/tokendiet/tokendiet.yaml                the example config, only if absent
#   /etc/systemd/system/tokendiet.service        the unit (scripts/tokendiet.service)
#   PREFIX/share/doc/tokendiet/README.md
# then prints how to enable it. Run as your user: it builds as you and asks
# sudo only for the copies.
#
#   scripts/install.sh [--prefix DIR] [--no-build]
#     --prefix DIR   where bin/ and share/ go (default /usr/local)
#     --no-build     install the already-built binary ($TOKENDIET_BIN or build/cli/tokendiet)
#   DESTDIR=/tmp/stage scripts/install.sh --no-build   stage into a directory (no sudo, no systemctl)
set -euo pipefail
cd "$(dirname "$0")/.."

PREFIX=/usr/local
BUILD=1
while (($#)); do
  case "$1" in
    --prefix) PREFIX=${2:?--prefix needs a directory}; shift 2 ;;
    --prefix=*) PREFIX=${1#*=}; shift ;;
    --no-build) BUILD=0; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "install.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ $PREFIX == /* ]] || { echo "install.sh: --prefix must be absolute" >&2; exit 2; }
DESTDIR=${DESTDIR:-}

if ((BUILD)); then
  scripts/setup.sh
  scripts/build.sh --target tokendiet
fi
BIN=${TOKENDIET_BIN:-${BUILD_DIR:-build}/cli/tokendiet}
[[ -x $BIN ]] || { echo "install.sh: no binary at $BIN (build first, or drop --no-build)" >&2; exit 1; }

SUDO=""
if [[ -z $DESTDIR && $(id -u) -ne 0 ]]; then SUDO=sudo; fi

CONF_DIR=$DESTDIR/etc/tokendiet
CONF=$CONF_DIR/tokendiet.yaml
UNIT=$DESTDIR/etc/systemd/system/tokendiet.service

$SUDO install -D -m 0755 "$BIN" "$DESTDIR$PREFIX/bin/tokendiet"
$SUDO install -D -m 0644 README.md "$DESTDIR$PREFIX/share/doc/tokendiet/README.md"
$SUDO install -d -m 0755 "$CONF_DIR"
if [[ -e $CONF ]]; then
  echo "install.sh: keeping the existing $CONF"
  # Say now, not at the next restart, if the new binary rejects the old config.
  "$BIN" check-config "$CONF" || echo "install.sh: WARNING: fix $CONF before restarting tokendiet" >&2
else
  $SUDO install -m 0644 config/tokendiet.example.yaml "$CONF"
  echo "install.sh: installed the example config as $CONF"
fi
# The unit names /usr/local; point it at the chosen prefix.
sed -e "s|/usr/local/bin/tokendiet|$PREFIX/bin/tokendiet|g" \
    -e "s|/usr/local/share/doc/tokendiet|$PREFIX/share/doc/tokendiet|g" scripts/tokendiet.service |
  $SUDO install -D -m 0644 /dev/stdin "$UNIT"
echo "install.sh: installed $DESTDIR$PREFIX/bin/tokendiet and $UNIT"

if [[ -z $DESTDIR && -d /run/systemd/system ]]; then
  $SUDO systemctl daemon-reload
  if systemctl is-active --quiet tokendiet; then
    echo "install.sh: tokendiet is running; restart it to use the new binary: sudo systemctl restart tokendiet"
  fi
fi

cat <<MSG

Next steps:
  edit $CONF          (check it: tokendiet check-config $CONF)
  sudo systemctl enable --now tokendiet
  curl -s http://127.0.0.1:8787/healthz     (the listen address in the config)
  export OPENAI_BASE_URL=http://127.0.0.1:8787/v1 ANTHROPIC_BASE_URL=http://127.0.0.1:8787
After editing the config: sudo systemctl reload tokendiet   (errors keep the old config; see journalctl -u tokendiet)
MSG
