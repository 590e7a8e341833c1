"""A Python credentials provider for the awslabs option ``credentialProviderClass``."""

from botocore.credentials import Credentials


class StaticProvider:
    """``load()`` returns fixed test credentials; the param (if any) is the access key."""

    def __init__(self, access_key: str = "AKIDEXAMPLE") -> None:
        self.access_key = access_key

    def load(self) -> Credentials:
        return Credentials(self.access_key, "secret-from-provider")


class FailingProvider:
    """``load()`` fails as a provider whose backend is down does."""

    def load(self) -> Credentials:
        raise RuntimeError("the provider's backend is down")
