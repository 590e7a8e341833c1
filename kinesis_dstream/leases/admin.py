"""Opening an existing lease table for an operator's command (``leases``, ``status``)."""

from __future__ import annotations

from typing import Optional

from ..aws import create_client
from ..backoff import endpoint_of
from ..errors import LeaseTableError
from .dynamodb import LeaseTable


def open_lease_table(
    table_name: str, endpoint_url: Optional[str] = None, region_name: Optional[str] = None
) -> LeaseTable:
    """The application's lease table; a missing table, or one that is not a lease table,
    is a :class:`~..errors.LeaseTableError` naming it."""
    client = create_client("dynamodb", region_name=region_name, endpoint_url=endpoint_url)
    table = LeaseTable(client, table_name)
    if not table.exists():
        raise LeaseTableError(
            f"no lease table {table_name!r}: is the application name right?",
            operation="DescribeTable",
            code="ResourceNotFoundException",
            **endpoint_of(client),
        )
    return table
