"""Issue 39 item 6: a settings file from a cloned repository is untrusted input. A bad one is a
``UserError`` of one line naming the file (and the field) before any actor exists; a huge one,
a FIFO or a device is refused unread, so nothing hangs or fills memory."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from covey.errors import UserError
from covey.settings.files import read_file
from covey.settings.merged import Settings
from tests.hostile_files import huge, special_files

# (file text, the field the line names (None: the whole file), words the reason holds)
BAD = {
    "truncated": ('{"permissions": {"allow": ["Read"', None, "not valid JSON"),
    "nul-byte": ('{"model": "a\x00b"}', None, "not valid JSON: Invalid control character"),
    "trailing-garbage": ('{"model": "a"} {"model": "b"}', None, "Extra data"),
    "top-level-list": ("[]", None, "JSON object, not list"),
    "top-level-string": ('"x"', None, "JSON object, not str"),
    "top-level-null": ("null", None, "JSON object, not NoneType"),
    "top-level-number": ("3", None, "JSON object, not int"),
    "deep-arrays": ('{"hooks": ' + "[" * 100_000 + "]" * 100_000 + "}", None, "nests"),
    "deep-objects": ('{"env": ' + '{"a": ' * 300 + "1" + "}" * 300 + "}", None, "more than 200 levels"),
    "permissions-list": ('{"permissions": []}', "permissions", "valid dictionary"),
    "permissions-allow-string": ('{"permissions": {"allow": "Bash"}}', "permissions.allow", "valid list"),
    "permissions-allow-ints": ('{"permissions": {"allow": [1]}}', "permissions.allow.0", "valid string"),
    "permissions-mode-unknown": ('{"permissions": {"defaultMode": "god"}}', "permissions.defaultMode", "'plan'"),
    "env-int-value": ('{"env": {"A": 1}}', "env.A", "valid string"),
    "env-list": ('{"env": ["A=1"]}', "env", "valid dictionary"),
    "model-list": ('{"model": []}', "model", "valid string"),
    "hooks-string": ('{"hooks": "x"}', "hooks", "valid dictionary"),
    "enabled-plugins-int": ('{"enabledPlugins": 3}', "enabledPlugins", "valid dictionary"),
    "auto-compact-word": ('{"autoCompactEnabled": "maybe"}', "autoCompactEnabled", "boolean"),
    "model-prices-string": ('{"modelPrices": {"m": {"input": "cheap"}}}', "modelPrices.m.input", "valid number"),
    "output-style-int": ('{"outputStyle": 5}', "outputStyle", "valid string"),
    "hooks-event-string": ('{"hooks": {"PreToolUse": "x"}}', "hooks.PreToolUse", "list of matcher groups"),
    "hooks-group-int": ('{"hooks": {"Stop": [5]}}', "hooks.Stop[0]", "must be an object"),
    "hooks-handlers-string": ('{"hooks": {"Stop": [{"hooks": "x"}]}}', "hooks.Stop[0].hooks", "list of hook"),
    "hooks-type-int": ('{"hooks": {"Stop": [{"hooks": [{"type": 5}]}]}}', "hooks.Stop[0].hooks[0].type",
                       "must be a string"),
    "hooks-command-int": ('{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": 5}]}]}}',
                          "hooks.Stop[0].hooks[0].command", "valid string"),
    "hooks-matcher-regex": ('{"hooks": {"PreToolUse": [{"matcher": "(", "hooks": [{"type": "command", "command": '
                            '"x"}]}]}}', "hooks.PreToolUse[0].matcher", "invalid regular expression"),
    "hooks-timeout-word": ('{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x", "timeout": "soon"}]}]}}',
                           "hooks.Stop[0].hooks[0].timeout", "valid number"),
    "hooks-http-no-url": ('{"hooks": {"Stop": [{"hooks": [{"type": "http"}]}]}}', "hooks.Stop[0].hooks[0].url",
                          "Field required"),
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "project" / ".claude").mkdir(parents=True)
    (tmp_path / "home").mkdir()
    return tmp_path / "project"


def _refused(project: Path) -> str:
    with pytest.raises(UserError) as caught:
        Settings.load(project, home=project.parent / "home")
    return str(caught.value)


def _assert_one_line(message: str, path: Path, field: str | None, words: str) -> None:
    assert "\n" not in message and words in message, message
    assert str(path) in message, message  # "settings file '<path>': ..." or, for hooks, "<path>: field ..."
    if field is not None:
        assert f"field {field!r}" in message, message


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_settings_file_is_one_line_naming_the_file_and_field(project, name):
    text, field, words = BAD[name]
    path = project / ".claude" / "settings.json"
    path.write_text(text)
    _assert_one_line(_refused(project), path, field, words)



SPECIAL = {
    **special_files("too large: over 4,194,304 bytes (4 MiB), the most a settings file may be; not read",
                    b'{"model": "\xff"}', device="a character device, not a regular file"),
    "huge-200mb": (lambda path: huge(path, b'{"model": "'),
                   "too large: over 4,194,304 bytes (4 MiB), the most a settings file may be; not read"),
    "invalid-utf8": (lambda path: path.write_bytes(b'{"model": "\xff"}'), "not UTF-8 text (byte 0xff at offset 11)"),
}


@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_a_special_or_huge_settings_file_is_refused_unread_in_one_line(project, name):
    make, words = SPECIAL[name]
    path = project / ".claude" / "settings.local.json"
    make(path)
    message = _refused(project)  # returns at all: the FIFO is never opened for reading
    _assert_one_line(message, path, None, f"cannot be read: {words}")


@pytest.mark.parametrize("relative", [".claude/settings.json", ".covey/settings.json", ".covey/settings.local.json"])
def test_every_project_settings_file_is_read_bounded(project, relative):
    path = project / relative
    path.parent.mkdir(exist_ok=True)
    os.mkfifo(path)
    _assert_one_line(_refused(project), path, None, "FIFO")


def test_a_bad_managed_settings_file_is_one_line_too(project, tmp_path):
    managed = tmp_path / "managed"
    managed.mkdir()
    (managed / "managed-settings.json").write_text('{"permissions": {"deny": "Bash"}}')
    with pytest.raises(UserError) as caught:
        Settings.load(project, home=tmp_path / "home", managed_dir=managed)
    _assert_one_line(str(caught.value), managed / "managed-settings.json", "permissions.deny", "valid list")


def test_a_large_but_sane_settings_file_still_loads(project):
    rules = [f"Bash(tool-{index}:*)" for index in range(50_000)]  # about 1.3 MB: well under the cap
    path = project / ".claude" / "settings.json"
    path.write_text(json.dumps({"permissions": {"allow": rules}}))
    assert read_file(path).permissions.allow[-1] == "Bash(tool-49999:*)"
