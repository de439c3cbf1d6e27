"""The optional LLM judge (Anthropic) and its batch mode.

Owns: ``llm`` (the judge seam: guards, fencing of untrusted memory text, caching, the
call) and ``batches`` (deferred pairs submitted and collected by the daemon).

May import: ``auditor.store``, ``auditor.records`` and the top-level modules. Never
``scan``, ``sources``, ``erasure``, ``access``, ``daemon`` or ``cli``.
"""
