"""``python -m auditor``: the ``memaudit`` command (:func:`auditor.cli.main.entry`)."""

from auditor.cli.main import entry

if __name__ == "__main__":
    entry()
