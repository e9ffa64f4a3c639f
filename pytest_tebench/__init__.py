"""pytest-tebench: evaluate code-benchmark predictions as pytest items on real builds."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
