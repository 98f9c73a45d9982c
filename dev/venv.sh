#!/usr/bin/env bash
# dev/venv.sh PYTHON VENV LABEL PIP-ARGS...: the Makefile's virtualenvs.
#
# Checks PYTHON is new enough before anything is made, makes VENV again when an
# earlier run left one built by another Python (a too-old one, or one that has
# since gone), and prints a line per package while pip works: a first install
# takes minutes, and a silent terminal for that long looks like a hang.
set -euo pipefail

python=$1 venv=$2 label=$3
shift 3
minimum="3.11"

version_ok() {
  "$1" -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1
}

if ! command -v "$python" >/dev/null 2>&1; then
  echo "signoff needs Python >= $minimum: '$python' is not on PATH." \
    "Name one with: make <target> PYTHON=python3.11 (or newer)" >&2
  exit 1
fi
if ! version_ok "$python"; then
  echo "signoff needs Python >= $minimum; $python is $("$python" --version 2>&1)." \
    "Name a newer one with: make <target> PYTHON=python3.11 (or newer)" >&2
  exit 1
fi
wanted=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
if [ -e "$venv" ]; then
  have=$("$venv/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || true)
  if [ "$have" != "$wanted" ]; then
    made_by="a Python that no longer runs"
    [ -n "$have" ] && made_by="Python $have"
    echo "== $venv was made by $made_by; making it again with $python ($wanted)"
    rm -rf "$venv"
  fi
fi

echo "== installing $label into $venv with Python $wanted (a few minutes the first time)"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip
# pip's own output, one line per package, without the "already satisfied" noise
# of a re-run; pip's exit status is kept (pipefail).
"$venv/bin/python" -m pip install --progress-bar off "$@" \
  | grep --line-buffered -E '^(Collecting|Processing|Installing collected|Successfully installed)' \
  | sed -u -E -e 's/^(Collecting|Processing) /   fetching /' -e 's/^Installing collected packages: .*/   installing.../' \
  -e 's/^Successfully installed .*/   done/' || [ "${PIPESTATUS[0]}" -eq 0 ]
