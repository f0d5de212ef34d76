"""Builtins that assign or evaluate, arithmetic, tests and here-documents: what a model writes is judged
by what bash does with it (issue 39 item 3). Plain policies over a real project on disk, no Ray."""

from __future__ import annotations

import pytest

from tests.security._policies import bash, policy, project

MODES = ("default", "acceptEdits", "plan", "dontAsk")
EXPECTED_UNPROVEN = {"default": "ask", "acceptEdits": "ask", "plan": "deny", "dontAsk": "deny"}


@pytest.fixture(scope="module")
def place(tmp_path_factory):
    return project(tmp_path_factory.mktemp("grammar"))


ASSIGNS_OR_EVALUATES = [
    # printf -v assigns, and evaluates an array subscript in the name
    "printf -v 'a[$(touch x)]' y", "printf -v PATH bin; ls", "printf -vPATH bin", "printf -v x '%s' y",
    "printf $FMT x", "printf * x",
    # read, mapfile, getopts assign
    "read x", "read -a arr", "read 'a[$(touch x)]'", "mapfile a", "readarray -t a", "getopts ab x",
    # declarations
    "declare x=1", "declare -n r=a", "typeset x=1", "local x=1", "export PATH=bin", "readonly x=1",
    "declare -a 'a[$(touch x)]=1'", "let 'a[$(touch x)]'", "let x=1",
    # tests that evaluate
    "test -v 'a[$(touch x)]'", "[ -v 'a[$(touch x)]' ]", "[[ -v 'a[$(touch x)]' ]]", "[[ -v x ]]",
    "[[ 'a[$(touch x)]' -eq 0 ]]", "[[ a -eq 0 ]]", "[[ x -lt 1 ]]", "test a -eq 1", "[ x -gt 1 ]",
    "[[ $x -eq 1 ]]", "[[ a =~ b ]]", "[[ -f x && -d y ]]", "[ -f x -a -d y ]", "test -R x",
    # arithmetic with names, subscripts or substitutions
    "echo $((a[$(touch x)]))", "echo $((x))", "echo $((x+1))", "(( a[1]++ ))", "((x=1))", "echo $[1+2]",
    "echo $((0x1f))", "echo ${x:1}", "echo ${arr[$(touch x)]}", "echo ${x:a[$(touch x)]}", "echo ${#x}",
    "echo \"$((a[1]))\"",
    # code and state
    "eval ls", "source x", ". x", "set -e; ls", "shopt -s extglob; ls", "enable -f x y", "builtin ls",
    "command ls", "hash -p ./bin/ls ls; ls", "alias ls=rm; ls", "trap 'rm x' EXIT; ls", "ulimit -n 5",
    "umask 000; ls", "pushd src", "popd", "exec ls", "coproc ls", "time -p ls", "time ls", "f() { ls; }",
    "f() { ls; }; f", "PATH=bin ls", "BASH_ENV=x bash -c ls", "IFS= ls", "LD_PRELOAD=x ls", "cd src; PATH=. ls",
]


@pytest.mark.parametrize("command", ASSIGNS_OR_EVALUATES)
@pytest.mark.parametrize("mode", MODES)
def test_builtins_that_assign_or_evaluate_are_not_read_only(place, command, mode):
    assert bash(policy(*place, mode), command) == EXPECTED_UNPROVEN[mode], (mode, command)


STILL_READ_ONLY = [
    "printf '%s\\n' x", "printf %s x", "printf -- -v", "printf '%s\\n' \"$HOME\"", "echo $((1+2))",
    "echo $(( (4 * 5) % 3 ))", "echo \"$((1+2))\"", "test -f README.md", "test -d src", "test ! -e nothing",
    "[ -d src ]", "[ -f README.md ]", "[ ! -f x ]", "[ -z abc ]", "[ -n abc ]", "[ a = b ]", "[ a != b ]",
    "[[ -f README.md ]]", "[[ -d src ]]", "[[ a != b ]]", "[[ 1 -eq 1 ]]", "test 1 -eq 1",
    "[ 2 -gt 1 ]", "[ -f README.md ] && cat README.md", "test -d src || ls", "[[ -z abc ]]",
    "[ README.md -nt src/app.py ]", "cd src && ls", "echo $HOME", "type ls",
]


@pytest.mark.parametrize("command", STILL_READ_ONLY)
@pytest.mark.parametrize("mode", MODES)
def test_plain_tests_printing_and_arithmetic_stay_read_only(place, command, mode):
    assert bash(policy(*place, mode), command) == "allow", (mode, command)


@pytest.mark.parametrize("command", ["test -f /etc/passwd", "[ -d ~/.ssh ]", "[[ -e ../../x ]]", "test -f link/notes.txt"])
def test_a_test_of_a_file_outside_the_project_is_a_read_outside(place, command):
    assert bash(policy(*place), command) == "ask"


HEREDOC_WRITES = [
    "cat <<EOF > .git/hooks/pre-commit\n#!/bin/sh\ntouch x\nEOF",
    "cat > .git/hooks/pre-commit <<EOF\n#!/bin/sh\nEOF",
    "cat <<'EOF' > .claude/settings.json\n{}\nEOF",
    "cat <<EOF >> ~/.bashrc\nx\nEOF",
    "cat <<-EOF > .mcp.json\n\t{}\n\tEOF",
    "cat <<EOF >.covey/settings.json\n{}\nEOF",
    "cat <<< x > .git/config",
    "tee .git/config <<EOF\nx\nEOF",
    "cat <<EOF && echo x > .git/config\nbody\nEOF",
    "cat <<EOF | tee .git/hooks/post-checkout\nbody\nEOF",
    "cat <<EOF; cp x .git/hooks/pre-push\nbody\nEOF",
    "cat <<EOF > $F\nbody\nEOF",
]


@pytest.mark.parametrize("command", HEREDOC_WRITES)
@pytest.mark.parametrize("mode", ["bypassPermissions", "acceptEdits", "default"])
def test_a_here_documents_first_line_is_judged_whole_for_protected_writes(place, command, mode):
    assert bash(policy(*place, mode), command) == "ask", (mode, command)


HEREDOC_HIDING = [
    "cat <<EOF && 'rm' -rf x\nbody\nEOF",
    "cat <<EOF && r\\m -rf x\nbody\nEOF",
    "cat <<EOF || /bin/rm -rf x\nbody\nEOF",
    "cat <<EOF\n$(rm -rf x)\nEOF",
    "cat <<EOF\n`rm -rf x`\nEOF",
    "cat <<EOF\n${x:-$(rm -rf x)}\nEOF",
    "cat <<EOF\nsome text $(echo a; rm -rf x) more\nEOF",
    "cat <<-EOF\n\t$(rm -rf x)\n\tEOF",
    "cat <<EOF | sh\nrm -rf x\nEOF",
    "cat <<EOF; rm -rf x\nbody\nEOF",
    "cat <<< $(rm -rf x)",
    "cat <<< ${x:-$(rm -rf x)}",
    "x=$(cat <<EOF\n$(rm -rf x)\nEOF\n)",
    "cat <<EOF\n$(bash -c 'rm -rf x')\nEOF",
]


@pytest.mark.parametrize("command", HEREDOC_HIDING)
def test_a_deny_rule_sees_through_here_documents(place, command):
    assert bash(policy(*place, "bypassPermissions", deny=["Bash(rm *)"]), command) in ("deny", "ask"), command


@pytest.mark.parametrize("command", ["cat <<'EOF'\n$(rm -rf x)\nEOF", "cat <<\"EOF\"\n`rm -rf x`\nEOF",
                                     "cat <<E\\OF\n$(rm -rf x)\nEOF", "cat <<EOF\nplain $HOME text\nEOF"])
def test_a_quoted_here_documents_body_is_inert(place, command):
    assert bash(policy(*place, "bypassPermissions", deny=["Bash(rm *)"]), command) == "allow", command


def test_a_word_after_the_delimiter_is_an_operand_of_the_command(place):
    p = policy(*place, deny=["Read(./.env)"])
    assert bash(p, "cat <<EOF .env\nx\nEOF") == "deny"
