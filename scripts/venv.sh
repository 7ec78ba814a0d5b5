# Sourced by the scripts here (after cd to the repository): .venv, made with $PYTHON
# (default python3) when missing, with dustonline installed editable from this checkout
# and the extras given as $1, e.g. venv_install "[test]".
venv_install() {
  if [ ! -x .venv/bin/python ]; then
    "${PYTHON:-python3}" -m venv .venv
  fi
  .venv/bin/python -m pip install -q --disable-pip-version-check -e ".${1:-}"
}
