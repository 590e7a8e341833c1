"""The base of Glue's transforms: ``Transform.apply(...)`` calls a new instance, as
aws-glue-libs' ``GlueTransform`` does."""

from __future__ import annotations

from typing import Any


class GlueTransform:
    """Base of Glue's transforms: ``Transform.apply(...)`` calls a new instance."""

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        return cls()(*args, **kwargs)

    @classmethod
    def name(cls) -> str:
        return cls.__name__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{self.name()} is an abstract transform")

    def __repr__(self) -> str:
        return f"<Transform: {self.name()}>"
