"""Keep Jupyter, IPython and matplotlib away from $HOME during tests and notebook runs."""

import os
import tempfile

_scratch = tempfile.mkdtemp(prefix="attention-lab-tests-")
for _name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "IPYTHONDIR", "MPLCONFIGDIR"):
    os.environ.setdefault(_name, os.path.join(_scratch, _name.lower()))
os.environ.setdefault("MPLBACKEND", "Agg")
# Notebooks show progress bars; tqdm's refreshes only slow the run down under pytest.
os.environ.setdefault("TQDM_MININTERVAL", "5")
