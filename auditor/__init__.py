"""memaudit: memory governance and audit for AI agents' long-term memory."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
