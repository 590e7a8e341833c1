"""The folder ``kinesis-dstream submit`` puts first on ``PYTHONPATH``: its
``sitecustomize`` installs the ``pyspark.streaming.kinesis`` stand-in at each Python
start there (the driver, the executors' workers). Not a package anyone imports."""
