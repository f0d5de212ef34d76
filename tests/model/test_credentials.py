"""``Credentials``, the plain core of a gateway's and the holder's credentials: a credential is
attached only to a config naming a server it was given for, is kept under its own id whoever
gives it, and never shows in a repr."""

from __future__ import annotations

import pickle

import pytest

from covey.errors import UserError
from covey.model.anthropic_config import AnthropicConfig, Credential, Credentials

KEY = "sk-ant-credentials-core"
URL = "http://127.0.0.1:1"


def remembered() -> tuple[Credentials, AnthropicConfig]:
    held = Credentials()
    return held, held.remember(AnthropicConfig(KEY, None, URL))


def test_a_keyless_config_for_the_server_it_was_given_for_gets_it_back():
    held, keyless = remembered()
    assert held.keyed(keyless) == AnthropicConfig(KEY, None, URL)


def test_a_keyless_config_naming_another_server_does_not_get_it():
    held, keyless = remembered()
    with pytest.raises(UserError, match="not given for 'http://attacker.example'"):
        held.keyed(AnthropicConfig(None, None, "http://attacker.example", credential_id=keyless.credential_id))


def test_the_same_key_given_for_a_second_server_serves_both():
    held, keyless = remembered()
    held.remember(AnthropicConfig(KEY, None, "http://127.0.0.1:2"))
    assert held.keyed(keyless) is not None
    assert held.keyed(AnthropicConfig(None, None, "http://127.0.0.1:2", credential_id=keyless.credential_id))


def test_a_forged_credential_is_kept_under_its_own_id_and_adds_no_server_to_the_real_one():
    held, keyless = remembered()
    forged = Credential("attacker-key", None, frozenset({"http://attacker.example"}))
    assert held.accept(forged)
    assert held.credential(keyless.credential_id or "") == Credential(KEY, None, frozenset({URL}))
    with pytest.raises(UserError):
        held.keyed(AnthropicConfig(None, None, "http://attacker.example", credential_id=keyless.credential_id))


def test_an_empty_credential_is_not_kept():
    assert not Credentials().accept(Credential(None, None, frozenset({URL})))


def test_a_credential_never_shows_in_a_repr():
    held, keyless = remembered()
    found = held.credential(keyless.credential_id or "")
    assert found is not None and KEY not in repr(found) and found.id == keyless.credential_id
    assert KEY.encode() not in pickle.dumps(keyless)
