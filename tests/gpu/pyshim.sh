# Sourced by the scripts that run on the lent GPU machine, which reaches no package index: the
# generator's package is this tree's generator/, imported as assocgen through a link (what
# `pip install -e .` gives elsewhere).  Run from the repository root.
if ! python3 -c "import assocgen" 2>/dev/null; then
    mkdir -p build/pyshim && ln -sfn "$PWD/generator" build/pyshim/assocgen
    export PYTHONPATH="$PWD/build/pyshim${PYTHONPATH:+:$PYTHONPATH}"
fi
