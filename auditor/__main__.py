"""``python -m auditor``: the ``memaudit`` command (:func:`auditor.cli.main.main`)."""

from auditor.cli.main import main

if __name__ == "__main__":
    main()
