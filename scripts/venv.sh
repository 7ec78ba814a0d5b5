# Sourced by the scripts here (after cd to the repository): .venv, made with $PYTHON
# (default python3) when missing, with dustonline installed editable from this checkout
# and the extras given as $1, e.g. venv_install "[test]".
#
# The install compiles the learner's modules (setup.py, about a minute), so it is skipped
# when nothing it reads changed since an install with these extras: pyproject.toml,
# setup.py, the C kernels, the package's Python sources, DUSTONLINE_COMPILE (.venv/
# .dustonline-stamp: that hash, then the extras installed with it; "[test]" holds the
# others, so the demo and the evaluation reuse the test install).
venv_install() {
  if [ ! -x .venv/bin/python ]; then
    "${PYTHON:-python3}" -m venv .venv
  fi
  local stamp=.venv/.dustonline-stamp sources
  sources=$( { echo "${DUSTONLINE_COMPILE:-}"; .venv/bin/python --version;
               find pyproject.toml setup.py dustonline -name '*.py' -o -name '*.c' -o -name '*.toml' |
                 LC_ALL=C sort | xargs sha256sum; } | sha256sum | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(head -1 "$stamp")" = "$sources" ] &&
     { [ -z "${1:-}" ] || grep -qxF -e "${1}" -e "[test]" "$stamp"; }; then
    return 0
  fi
  .venv/bin/python -m pip install -q --disable-pip-version-check -e ".${1:-}"
  if [ -f "$stamp" ] && [ "$(head -1 "$stamp")" = "$sources" ]; then
    echo "${1:-}" >> "$stamp"
  else
    printf '%s\n%s\n' "$sources" "${1:-}" > "$stamp"
  fi
}
