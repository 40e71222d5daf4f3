"""``python -m agentkit``."""

import sys

from agentkit.cli import main

sys.exit(main())
