"""Every use of PySpark internals (``_jsc``, ``_jrdd``, ``_jssc``) lives here.

PySpark's public Python API has no way to cache an RDD without a Python pass over it,
to tell which parent partitions a coalesced partition reads,
to ask whether a SparkContext is still alive, or to read a StreamingContext's batch
interval or how far back its graph may recompute, nor to ask which filesystems and
classes the JVM has (the Glue layer's writers); these few helpers do it through the
JVM objects, in one place, so a PySpark upgrade that moves them breaks one module.
"""

from __future__ import annotations

from typing import Any, Optional


def context_alive(sc: Any) -> bool:
    """True while ``sc`` (a SparkContext) has a live JVM context."""
    return sc is not None and getattr(sc, "_jsc", None) is not None


def count_in_jvm(rdd: Any) -> int:
    """Compute (and cache, if persisted) ``rdd`` with no Python pass over its elements."""
    return int(rdd._jrdd.count())


def coalesced_parents(rdd: Any) -> list:
    """For each partition of ``rdd`` (a ``coalesce`` without shuffle), the indexes of the
    parent partitions it reads, in the order it reads them."""
    return [list(p.parentsIndices()) for p in rdd._jrdd.rdd().partitions()]


def batch_interval_s(ssc: Any) -> float:
    """A StreamingContext's batch interval in seconds."""
    return ssc._jssc.ssc().graph().batchDuration().milliseconds() / 1000


def remember_ms(ssc: Any) -> Optional[int]:
    """How far back (ms) the graph's input streams must remember batches: window lengths
    and state checkpoint intervals set it. None when Spark does not say."""
    try:
        duration = ssc._jssc.ssc().graph().getMaxInputStreamRememberDuration()
        return None if duration is None else int(duration.milliseconds())
    except Exception:  # not started yet, or an internal that moved
        return None


def job_times_ms(ssc: Any, time_ms: int) -> tuple:
    """The job times whose completions report batch ``time_ms``: for each output of the
    graph, the first of its job times at or after ``time_ms`` (:func:`next_job_times`).
    Without outputs or on any surprise: ``(time_ms,)``.
    """
    try:
        graph = ssc._jssc.ssc().graph()
        zero = graph.zeroTime().milliseconds()
        slides = [int(o.slideDuration().milliseconds()) for o in graph.getOutputStreams()]
    except Exception:  # not started, or an internal that moved
        return (time_ms,)
    return next_job_times(zero, slides, time_ms)


def next_job_times(zero_ms: int, slides_ms: list, time_ms: int) -> tuple:
    """For each output sliding every ``slides_ms`` from ``zero_ms``, its first job time at
    or after ``time_ms``; distinct, in order.

    An output on a window sliding every 5 batches runs jobs only every 5th batch time;
    the times in between produce RDDs (computed when its next job time comes) but no jobs
    of its own, so a batch's records are processed once *every* output's next job time
    has run: a batch is done when all of them succeeded (one output running every batch
    does not make a window's records processed).
    """
    slides = [slide for slide in slides_ms if slide > 0]
    if not slides or time_ms <= zero_ms:
        return (time_ms,)
    return tuple(sorted({zero_ms + -(-(time_ms - zero_ms) // s) * s for s in slides}))


def input_stream_ids(ssc: Any) -> set:
    """The ids of the graph's input streams."""
    return {int(s.id()) for s in ssc._jssc.ssc().graph().getInputStreams()}


def report_input_info(
    ssc: Any, input_stream_id: int, time_ms: int, num_records: int, description: str
) -> None:
    """One ``StreamInputInfo`` for batch ``time_ms`` to the scheduler's
    ``InputInfoTracker`` (the Streaming tab's input size, rate and batch description)."""
    jvm = ssc._sc._jvm
    metadata = jvm.java.util.HashMap()
    metadata.put("Description", description)
    info = jvm.org.apache.spark.streaming.scheduler.StreamInputInfo(
        input_stream_id,
        num_records,
        jvm.org.apache.spark.api.python.PythonUtils.toScalaMap(metadata),
    )
    time = jvm.org.apache.spark.streaming.Time(time_ms)
    tracker = ssc._jssc.ssc().scheduler().inputInfoTracker()
    # The tick stream (a FileInputDStream, computed just before this transform) reported
    # its own 0 for its id; a second report for (time, id) throws, so the 0 is replaced.
    # (A stream of our own instead is lost from a restored graph: a never-read input
    # stream gets no context when Spark restores a checkpoint, and start() fails.)
    field = tracker.getClass().getDeclaredField("batchTimeToInputInfos")
    field.setAccessible(True)
    infos = field.get(tracker).get(time)
    if infos.isDefined():
        infos.get().put(input_stream_id, info)
    else:
        tracker.reportInfo(time, info)


def name_input_stream(ssc: Any, input_stream_id: int, name: str) -> None:
    """Give input stream ``input_stream_id`` its row name in the Streaming tab.

    The tab names a row by the stream's receiver, else by its class ("File stream [1]");
    a Python program cannot add a JVM class, so the row gets a receiver's name through the
    listener event a receiver's start posts (the tab's listener reads only its name).
    """
    jvm = ssc._sc._jvm
    scheduler = jvm.org.apache.spark.streaming.scheduler
    info = scheduler.ReceiverInfo(input_stream_id, name, True, "driver", "driver", "", "", -1)
    event = scheduler.StreamingListenerReceiverStarted(info)
    ssc._jssc.ssc().scheduler().listenerBus().post(event)


#: What a Hadoop lookup raises when no FileSystem class for a scheme can be had: none is
#: configured, or the one configured is not on the classpath (pip-installed PySpark maps
#: ``s3a``, ``gs``, ``abfs`` in Hadoop's core-default.xml but ships none of their jars).
_NO_FILESYSTEM = ("UnsupportedFileSystemException", "No FileSystem for", "ClassNotFoundException")


def hadoop_can_write(sc: Any, path: str) -> bool:
    """True when Spark's Hadoop layer has a FileSystem it can load for ``path``'s scheme
    (a path without one: the default filesystem's). pip-installed PySpark has none for
    ``s3://``, and none it can load for ``s3a://`` or ``gs://`` (no hadoop-aws or GCS
    connector jar); EMR, Glue and Databricks do. Only a missing or unloadable filesystem
    answers False: any other surprise leaves the answer to Spark's writer."""
    fs = sc._jvm.org.apache.hadoop.fs
    conf = sc._jsc.hadoopConfiguration()
    try:
        scheme = fs.Path(path).toUri().getScheme() or fs.FileSystem.getDefaultUri(conf).getScheme()
        fs.FileSystem.getFileSystemClass(scheme, conf)
    except Exception as exc:  # Py4JJavaError carrying the Java error
        return not any(marker in str(exc) for marker in _NO_FILESYSTEM)
    return True


def hadoop_mkdirs(sc: Any, path: str) -> Optional[str]:
    """Make directory ``path`` (and its parents) through Spark's Hadoop layer, as Spark
    makes a query's checkpoint directory; None when it is there, else the Java error
    (``class: message``) or why not."""
    fs = sc._jvm.org.apache.hadoop.fs
    try:
        where = fs.Path(path)
        if where.getFileSystem(sc._jsc.hadoopConfiguration()).mkdirs(where):
            return None
        return "Hadoop's mkdirs answered false"
    except Exception as exc:  # Py4JJavaError: the Java exception says what failed
        java = getattr(exc, "java_exception", None)
        if java is not None:
            try:
                return str(java.toString())
            except Exception:  # the JVM went away: the Python text is all there is
                pass
        return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def jvm_has_class(sc: Any, class_name: str) -> bool:
    """True when the driver's JVM can load ``class_name`` (a data source's jar is there)."""
    try:
        sc._jvm.java.lang.Class.forName(class_name)
    except Exception:  # Py4JJavaError: ClassNotFoundException
        return False
    return True


def active_spark_context() -> Any:
    """The process's running SparkContext, or None (PySpark keeps it on the class)."""
    from pyspark import SparkContext

    return SparkContext._active_spark_context
