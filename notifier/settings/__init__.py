"""The configuration: what a run is told, from the command line, the environment and the config file.

``options`` is the one table of options; ``settings`` resolves them into a frozen ``Settings``;
``config_tables`` and ``config_keys`` read the config's tables, ``config_sites`` its ``[[sites]]``;
``discovery`` finds the sitemap. (A ``postgresql://`` state's location is read by
``notifier/database.py``, below both this package and ``store/``, which never imports it.)
This package's modules load no page reader, no HTTP client and no database driver
(``tests/test_boundary.py``).
"""
