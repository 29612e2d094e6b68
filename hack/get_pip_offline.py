"""Offline stand-in for ansible-test's get-pip download (see shared reference ansible-test-offline.md).

ansible-test runs this inside each fresh sanity venv with the arguments it would give
``pip install``. Bootstrap the pip bundled with the interpreter, then let that pip
install the requested version from the package index.
"""

import ensurepip
import os
import subprocess
import sys

ensurepip.bootstrap(upgrade=True)
# ensurepip points PIP_CONFIG_FILE at /dev/null, which hides the machine's pip settings.
os.environ.pop("PIP_CONFIG_FILE", None)
args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
sys.exit(subprocess.call([sys.executable, "-m", "pip", "install", *args]))
