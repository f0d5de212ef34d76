"""The commands a simple command runs: itself, what a wrapper runs (``sudo rm``, ``timeout 5 rm``,
``find -exec rm``), and the code it hands to a shell (``bash -c '…'``, ``eval``, ``env -S``).

For deny and ask rules, which err on the side of matching: after a wrapper, every later word that
is not an option is tried as the program, so a wrapper's own option values (``sudo -u root rm``,
``exec -a name rm``, ``xargs -a list rm``) cannot hide the command.
"""

from __future__ import annotations

from dataclasses import dataclass, field

WRAPPERS = frozenset({
    "time", "nohup", "command", "builtin", "noglob", "nice", "timeout", "stdbuf", "xargs", "env", "sudo", "doas",
    "exec", "ionice", "setsid", "unbuffer", "chroot", "strace", "ltrace", "flock", "coproc", "busybox", "nsenter",
    "unshare", "taskset", "chrt", "runuser", "firejail", "catchsegv", "valgrind", "torsocks", "proxychains",
    "caffeinate", "systemd-run", "script", "entr", "parallel", "sg", "watch",
})
"""Run the command that follows them."""
SHELLS = frozenset({"bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "fish", "rbash", "su"})
_EXEC_PREDICATES = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_MAX_FORMS = 24


@dataclass
class Runs:
    forms: list[list[str]] = field(default_factory=list)
    """The command's words, then each command it may run (static words only)."""
    codes: list[str] = field(default_factory=list)
    """Shell code it hands over (``bash -c CODE``, ``eval ARGS``, ``env -S CODE``, ``watch CMD``)."""
    computed: str | None = None
    """Why what it runs is not known before it runs (``sudo $CMD``, ``bash -c "$X"``, ``… | bash``)."""


def runs(words: tuple[str | None, ...]) -> Runs:
    found = Runs()
    _visit(list(words), found, depth=0)
    return found


def basename(program: str) -> str:
    return program.rsplit("/", 1)[-1]


def _visit(words: list[str | None], found: Runs, depth: int) -> None:
    if not words or len(found.forms) >= _MAX_FORMS or depth > 6:
        return
    if words[0] is None:
        found.computed = found.computed or "a program computed at run time"
        return
    found.forms.append([w for w in words if w is not None])
    name = basename(words[0])
    if name != words[0]:
        found.forms.append([name, *(w for w in words[1:] if w is not None)])
    _code(name, words, found)
    if name in WRAPPERS:
        for i in range(1, len(words)):
            word = words[i]
            if word is None:
                found.computed = found.computed or f"{name} runs a program computed at run time"
                break
            if not word.startswith(("-", "+")) and "=" not in word.split("/", 1)[0]:
                _visit(words[i:], found, depth + 1)
    if name == "find":
        for i, word in enumerate(words):
            if word in _EXEC_PREDICATES:
                _visit(words[i + 1:], found, depth + 1)


def _code(name: str, words: list[str | None], found: Runs) -> None:
    """Shell code a command runs, or a note that it is computed or read from standard input."""
    args = words[1:]
    if name == "eval" or name == "watch":
        operands = [a for a in args if a is None or not a.startswith("-")] if name == "watch" else args
        _take(" ".join(a for a in operands if a is not None), None in operands, name, found)
    elif name in SHELLS:
        _shell(name, args, found)
    elif name == "env":
        for i, arg in enumerate(args):
            if arg is not None and (arg in ("-S", "--split-string") or arg.startswith(("-S", "--split-string="))):
                value = arg.partition("=")[2] if arg.startswith("--") else (arg[2:] or (args[i + 1] if i + 1 < len(args) else None))
                _take(value or "", value is None, name, found)
    elif name == "flock":
        _after_c(args, name, found)


def _shell(name: str, args: list[str | None], found: Runs) -> None:
    """``bash [options] -c CODE``: the code is the first operand after the options; no ``-c`` and
    no operand means the shell reads its code from standard input."""
    with_c, i = False, 0
    while i < len(args):
        arg = args[i]
        if arg is None:
            found.computed = found.computed or f"{name} is given code computed at run time"
            return
        if arg == "--":
            i += 1
            break
        if arg in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            i += 2
            continue
        if arg.startswith(("-", "+")) and len(arg) > 1:
            with_c = with_c or (not arg.startswith("--") and "c" in arg[1:])
            i += 1
            continue
        break
    if i >= len(args):
        if not with_c:
            found.computed = found.computed or f"{name} reads its code from standard input"
        return
    if with_c:
        _take(args[i] or "", args[i] is None, name, found)


def _after_c(args: list[str | None], name: str, found: Runs) -> None:
    for i, arg in enumerate(args):
        if arg in ("-c", "--command") and i + 1 < len(args):
            _take(args[i + 1] or "", args[i + 1] is None, name, found)


def _take(code: str, computed: bool, name: str, found: Runs) -> None:
    if computed:
        found.computed = found.computed or f"{name} is given code computed at run time"
    elif code:
        found.codes.append(code)
