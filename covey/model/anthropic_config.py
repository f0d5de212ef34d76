"""The real model as it travels between processes: its settings, without the SDK.

An ``AnthropicModel`` pickles as an ``AnthropicConfig`` (``AnthropicModel.__reduce__``), so
unpickling the session's model in an agent actor does not import the ``anthropic`` SDK
(~60 MiB and ~0.75 s of CPU per process). It is data, not a model: under Ray the agent sends
through its node's model gateway (``covey.gateway.remote_model.GatewayModel``), and the gateway
(or a process without Ray) sends through ``AnthropicModel.of(config)``, that process's one
model per config (``covey.agent.services.model_of``).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from typing import Any, Mapping

from covey.errors import UserError

DEFAULT_BASE_URL = "https://api.anthropic.com"


@dataclass(frozen=True)
class AnthropicConfig:
    """Everything an ``AnthropicModel`` is built from (the credential resolved, never looked up again)."""

    api_key: str | None
    auth_token: str | None
    base_url: str
    max_retries: int = 4
    timeout_s: float = 600
    retry_backoff_s: float = 0.5
    fallback_model: str | None = None
    credential_id: str | None = None
    """A keyless config's credential, by id (``keyless``): the node's model gateway looks it up."""

    @classmethod
    def from_env(cls, env: Mapping[str, str], **options: Any) -> "AnthropicConfig":
        """The credential (``ANTHROPIC_API_KEY``, else ``ANTHROPIC_AUTH_TOKEN``) and server
        (``ANTHROPIC_BASE_URL``) from ``env`` alone, never from this process's environment."""
        api_key = env.get("ANTHROPIC_API_KEY") or None
        auth_token = None if api_key else env.get("ANTHROPIC_AUTH_TOKEN") or None
        if not (api_key or auth_token):
            raise UserError(
                "no Anthropic API key in the run's environment: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), "
                "or use --model scripted:PATH to run without the API"
            )
        return cls(api_key, auth_token, env.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL, **options)

    @property
    def keyed(self) -> bool:
        return bool(self.api_key or self.auth_token)

    def keyless(self) -> "AnthropicConfig":
        """This config without its credential, which it names by id instead: what travels to
        agent actors under Ray (``Credentials`` holds the credential for the node's gateway)."""
        if not self.keyed:
            return self
        return replace(self, api_key=None, auth_token=None, credential_id=credential_id(self.api_key, self.auth_token))

    def keyed_with(self, credential: tuple[str | None, str | None]) -> "AnthropicConfig":
        """A keyless config with its credential (api key, auth token) back."""
        return replace(self, api_key=credential[0], auth_token=credential[1], credential_id=None)

    def __repr__(self) -> str:  # the dataclass's would print the credential
        secret = self.credential_id or credential_id(self.api_key, self.auth_token)
        return (f"AnthropicConfig(base_url={self.base_url!r}, credential=sha256:{secret[:8]}, "
                f"max_retries={self.max_retries}, timeout_s={self.timeout_s}, "
                f"retry_backoff_s={self.retry_backoff_s}, fallback_model={self.fallback_model!r})")


def credential_id(api_key: str | None, auth_token: str | None) -> str:
    """A credential's id: a hash (the credential cannot be read back from it)."""
    kind, secret = ("key", api_key) if api_key else ("token", auth_token or "")
    return hashlib.sha256(f"{kind}:{secret}".encode()).hexdigest()


@dataclass(frozen=True)
class Credential:
    """An API credential and the servers it was given for: it is sent to those only."""

    api_key: str | None
    auth_token: str | None
    base_urls: frozenset[str]

    @property
    def id(self) -> str:
        return credential_id(self.api_key, self.auth_token)

    def __repr__(self) -> str:
        return f"Credential(sha256:{self.id[:8]}, base_urls={sorted(self.base_urls)!r})"


class Credentials:
    """The credentials of keyless configs, by id: a gateway's (``covey.ratelimit.credentials``) and
    the cluster's holder's (``covey.ratelimit.actor``), which never answers with one."""

    def __init__(self) -> None:
        self._by_id: dict[str, Credential] = {}

    def remember(self, config: AnthropicConfig) -> AnthropicConfig:
        """Keep ``config``'s credential, for its server; its keyless form."""
        keyless = config.keyless()
        if keyless.credential_id is not None:
            self.accept(Credential(config.api_key, config.auth_token, frozenset({config.base_url})))
        return keyless

    def accept(self, credential: Credential) -> bool:
        """Keep ``credential`` (with the servers it is known for already)."""
        if not (credential.api_key or credential.auth_token):
            return False
        known = self._by_id.get(credential.id)
        urls = credential.base_urls | (known.base_urls if known is not None else frozenset())
        self._by_id[credential.id] = Credential(credential.api_key, credential.auth_token, urls)
        return True

    def credential(self, credential_id: str) -> Credential | None:
        return self._by_id.get(credential_id)

    def keyed(self, config: AnthropicConfig) -> AnthropicConfig | None:
        """A keyless ``config`` with its credential (None: not known here). A config that names
        another server than the credential was given for is refused: whoever holds a keyless
        config cannot have the credential sent to a server of theirs."""
        if config.credential_id is None or (found := self._by_id.get(config.credential_id)) is None:
            return None
        if config.base_url not in found.base_urls:
            raise UserError(f"the run's API credential was not given for {config.base_url!r}: it is not sent there")
        return config.keyed_with((found.api_key, found.auth_token))
