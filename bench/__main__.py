"""Entry point of `python -m bench` (and `make bench`)."""

from __future__ import annotations

import sys

from bench.cli import main

sys.exit(main())
