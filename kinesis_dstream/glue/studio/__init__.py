"""Glue Studio's visual transforms (its ``gs_*`` modules) and its Evaluate Data Quality
node, on a batch's DataFrame.

Glue Studio ships each visual transform as a module (``gs_now.py``, ``gs_concat.py``…)
handed to the job with ``--extra-py-files``; importing one adds a method of that name to
``DynamicFrame`` and to Spark's ``DataFrame``. The shim folder holds modules of the same
names that register the functions here (:mod:`.registry`); the logic is in
:mod:`.columns`, :mod:`.timestamps` and :mod:`.rows`, Data Quality in :mod:`.dqdl` and
:mod:`.data_quality`.
"""
