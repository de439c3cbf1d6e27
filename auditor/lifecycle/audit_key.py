"""The audit chain's HMAC key, as every part that writes or checks the audit log needs it.

A leaf module: it imports the settings type only, so that the store's services, the
lifecycle, the source registry, erasure and the access services can all reach the key
without importing one another (``audit_key`` used to live in :mod:`auditor.lifecycle.machine`,
which made ``lifecycle -> source_actions -> source_registry -> lifecycle`` a cycle).
The key itself comes from the settings (env or a secret file, never the code).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from auditor.config import Settings

__all__ = ["audit_key"]


def audit_key(settings: Settings) -> bytes | None:
    """The audit chain's HMAC key, if one is configured (:meth:`Settings.audit_key`)."""
    return settings.audit_key()
