from __future__ import annotations

import sys
from pathlib import Path

# Lets test modules import the shared helper module ``tooling`` beside them.
sys.path.insert(0, str(Path(__file__).parent))
