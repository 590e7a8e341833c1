"""The source's driver side, in Spark's source runner: runner (one stream), planner,
peek, lag, multi (several streams), fan_out (a query's consumers)."""
