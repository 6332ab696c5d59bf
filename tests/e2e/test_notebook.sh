#!/usr/bin/env bash
# A Jupyter notebook run headless (nbclient and an ipykernel, Debian's
# python3-nbclient and python3-ipykernel) under the default options: the
# kernel keeps its profile and runtime files under HOME, and talks to the
# client over ZeroMQ on the sandbox's loopback.
. "$(dirname "$0")/lib.sh"
HERE=$(cd "$(dirname "$0")" && pwd)

t_notebook_runs()
{
	cp "$HERE/notebook.py" "$E2E_TMP/notebook.py"
	chmod 644 "$E2E_TMP/notebook.py"
	MOAT_TIMEOUT=180 capture moat do -- $PY "$E2E_TMP/notebook.py" /tmp/out.ipynb
	assert_eq 0 "$STATUS" "the notebook runs to its end (the kernel did not die)"
	assert_eq 'cell 0: 42
cell 1: home ok
cell 2: tmp ok
cell 3: {"mean": 2.5}
done' "$OUT" "every cell's output"
}

if ! $PY -c 'import nbclient, nbformat, ipykernel' 2>/dev/null; then
	echo "skip  $E2E_FILE: python3-nbclient, python3-nbformat or python3-ipykernel is not installed (make deps)"
else
	run_test "a notebook runs headless under the default options" t_notebook_runs
fi
e2e_done
