"""Items dispatched to a cluster: collection, caches and reports stay where pytest runs.

A build step cannot run remotely without shared disks (it writes into a workspace the caller
reads), so what crosses the wire is a whole item: the benchmark's name and option values, the
instance, the prediction and the repository objects it needs (a git bundle). The worker makes
the adapter and the executor itself and returns the plain-data result record.

* ``settings.py``: the ``--tebench-dask-*`` options and the executor names (no Dask import);
* ``bundles.py``: git bundles of the commits an item needs, made and unpacked;
* ``gold.py``: gold references sent back to the controller's cache and out with later tasks;
* ``worker.py``: what runs on a ``dask worker`` (never imports pytest);
* ``client.py``: the controller side: connect, check workers, submit, wait, cancel.
"""
