"""``python -m agentkit``."""

import os
import sys

# `python -m` puts the current folder first on sys.path, where a ./jinja2.py or
# ./requests.py would replace the installed package agentkit imports. The
# command searches it last instead, for Python backends (cli.loading.add_python_paths).
if sys.path and os.path.abspath(sys.path[0] or os.curdir) == os.getcwd():
    del sys.path[0]

from agentkit.cli import main  # after sys.path is made safe

sys.exit(main())
