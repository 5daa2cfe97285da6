"""A whole class: its submissions found (``discovery``), graded on a Dask cluster (``cluster``,
``tls``, ``run``) into a resumable SQLite store (``store``)."""
