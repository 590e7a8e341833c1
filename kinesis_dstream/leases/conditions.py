"""The one conditional UpdateItem every lease write is: its expressions, built once.

Every write bumps ``leaseCounter`` on condition that it is still what the writer read
(a compare-and-swap), and may also require an owner: ``leaseOwner`` (a lease we hold) or
``checkpointOwner`` (a lease we hand off in a KCL 3.x fleet). Pure: no I/O.
"""

from __future__ import annotations

from typing import Optional

from .lease import CHECKPOINT_OWNER, LEASE_COUNTER, LEASE_OWNER, Lease


def guard(lease: Lease) -> dict:
    """Who must still hold ``lease`` for a renewal or checkpoint: its owner, or, while we
    hand it off in a KCL 3.x fleet, its checkpoint owner (``counter_update``'s keywords)."""
    if lease.checkpoint_owner is not None:
        return {"checkpoint_owner_must_be": lease.checkpoint_owner}
    return {"owner_must_be": lease.lease_owner}


def counter_update(
    counter: int,
    *,
    set_: dict,
    remove: tuple = (),
    owner_must_be: Optional[str] = None,
    checkpoint_owner_must_be: Optional[str] = None,
) -> dict:
    """UpdateItem's expression arguments: SET ``set_`` and counter + 1, REMOVE
    ``remove``, if the counter is ``counter`` (and the owners are as given)."""
    names = {"#counter": LEASE_COUNTER}
    values = {":expected": {"N": str(counter)}, ":next": {"N": str(counter + 1)}}
    assignments = ["#counter = :next"]
    for n, (attribute, value) in enumerate(set_.items()):
        names[f"#s{n}"] = attribute
        values[f":s{n}"] = value
        assignments.append(f"#s{n} = :s{n}")
    expression = "SET " + ", ".join(assignments)
    if remove:
        for n, attribute in enumerate(remove):
            names[f"#r{n}"] = attribute
        expression += " REMOVE " + ", ".join(f"#r{n}" for n in range(len(remove)))
    condition = "#counter = :expected"
    for attribute, must_be, tag in (
        (LEASE_OWNER, owner_must_be, "owner"),
        (CHECKPOINT_OWNER, checkpoint_owner_must_be, "cpowner"),
    ):
        if must_be is not None:
            names[f"#{tag}"] = attribute
            values[f":{tag}"] = {"S": must_be}
            condition += f" AND #{tag} = :{tag}"
    return {
        "UpdateExpression": expression,
        "ConditionExpression": condition,
        "ExpressionAttributeNames": names,
        "ExpressionAttributeValues": values,
    }
