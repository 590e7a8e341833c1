"""The source's executor side: partition (one range, read and recorded), group (several
ranges a task)."""
