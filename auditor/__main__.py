"""``python -m auditor``: the ``memaudit`` command (:func:`auditor.cli.main`)."""

from auditor.cli import main

if __name__ == "__main__":
    main()
