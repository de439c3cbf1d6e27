"""Tools around the engine: corpus splits for honest evaluation (more move here later).

May import ``auditor.config``, ``auditor.records``, ``auditor.detectors`` and the scan
engine; nothing in the engine imports this package.
"""
