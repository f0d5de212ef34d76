"""TerminalAsker: y / n / always on a terminal (here: string streams)."""

import io

from covey.permissions import Allow, PermissionPolicy, TerminalAsker
from covey.permissions.decisions import PermissionRequest

REQUEST = PermissionRequest(
    tool_name="Bash", subject="make", input={}, message="Allow Bash (make)?", reason="no rule allows it",
    suggested_rule="Bash(make)", agent_id="a1",
)


async def ask(answer: str):
    out = io.StringIO()
    result = await TerminalAsker(stdin=io.StringIO(answer + "\n"), stdout=out)(REQUEST)
    return result, out.getvalue()


async def test_yes_and_no():
    assert (await ask("y"))[0] is True
    assert (await ask("no"))[0] is False
    assert (await ask(""))[0] is False


async def test_prompt_shows_the_call_the_agent_and_the_rule_always_would_add():
    _, shown = await ask("n")
    assert "Allow Bash (make)?" in shown and "[a1]" in shown and "Bash(make)" in shown


async def test_always_adds_a_session_allow_rule(tmp_path):
    out = io.StringIO()
    p = PermissionPolicy(project_root=tmp_path, asker=TerminalAsker(stdin=io.StringIO("a\n"), stdout=out))
    d = await p.resolve(p.decide("Bash", False, "make", {}))
    assert isinstance(d, Allow) and d.add_allow_rules == ["Bash(make)"]
    later = p.decide("Bash", False, "make", {})
    assert isinstance(later, Allow) and later.source == "session"
    assert not isinstance(p.decide("Bash", False, "make install", {}), Allow)


async def test_no_terminal_denies_instead_of_blocking(tmp_path):
    d = await TerminalAsker(tty=str(tmp_path / "missing-tty"))(REQUEST)
    assert d.behavior == "deny" and "No terminal" in d.message


async def test_a_real_terminal_is_asked_and_answers():
    """A terminal device is not seekable: opening it ``r+`` in text mode failed, so every
    prompt was denied as "no terminal". A pty stands for the controlling terminal here."""
    import os
    import select

    master, slave = os.openpty()
    os.write(master, b"y\n")
    try:
        assert await TerminalAsker(tty=os.ttyname(slave))(REQUEST) is True
        shown = b""
        while select.select([master], [], [], 0.2)[0]:
            shown += os.read(master, 4096)
    finally:
        os.close(master), os.close(slave)
    assert b"Allow Bash (make)?" in shown
