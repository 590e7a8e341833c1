"""What an application is doing, measured from outside it: ``kinesis-dstream status``.

:mod:`.shards` builds one :class:`~.shards.ShardStatus` per lease (owner, renewal,
checkpoint, lag read just after the checkpoint through the one read core);
:mod:`.query` does the same for a Structured Streaming query from its checkpoint
location and end store; :mod:`.render` prints them as a table with totals or as JSON.
"""

from .shards import AppStatus, ShardStatus, application_status

__all__ = ["AppStatus", "ShardStatus", "application_status"]
