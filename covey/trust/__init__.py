"""Trust: which project folders the person trusts, and what an untrusted one's files may not grant."""

from covey.trust.decision import TRUSTED, SetAside, Trust, decide
from covey.trust.store import ALL, TrustStore

__all__ = ["ALL", "TRUSTED", "SetAside", "Trust", "TrustStore", "decide"]
