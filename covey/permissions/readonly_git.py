"""The read-only forms of ``git``: subcommands that only read, each with an allow list of options.

Global options before the subcommand other than ``--no-pager`` / ``-P`` /
``--no-optional-locks`` are not read-only (``-c core.pager=…`` runs a program, ``-C``
moves elsewhere). Options that write a file or run a program (``--output``,
``--ext-diff``, ``--textconv``, ``-O``/``--open-files-in-pager``, ``--no-index``) are on
no list. ``branch``, ``tag``, ``remote``, ``stash``, ``config`` and ``reflog`` read only
in their listing forms.
"""

from __future__ import annotations

from dataclasses import replace

from covey.permissions.options import Options, Parsed, options, parse_options as _parse_options

_DIFF_LONG = (
    "patch no-patch raw patch-with-raw patch-with-stat stat shortstat numstat summary name-only name-status "
    "full-index binary no-renames find-renames find-copies find-copies-harder irreversible-delete text "
    "ignore-space-at-eol ignore-space-change ignore-all-space ignore-blank-lines ignore-cr-at-eol minimal patience "
    "histogram exit-quiet quiet exit-code check no-color no-prefix no-ext-diff no-textconv ita-invisible-in-index "
    "function-context cached staged merge-base compact-summary numstat reverse R"
)
_DIFF_VALUED = "unified diff-filter src-prefix dst-prefix line-prefix inter-hunk-context abbrev-length word-diff-regex anchored"
_DIFF_OPTIONAL = "color word-diff color-words color-moved relative dirstat stat-width abbrev ws-error-highlight find-renames find-copies break-rewrites submodule ignore-submodules"
_LOG_LONG = (
    "oneline graph no-decorate abbrev-commit no-abbrev-commit all branches tags remotes reverse first-parent merges "
    "no-merges follow full-history simplify-by-decoration left-right cherry-pick cherry-mark cherry boundary "
    "topo-order date-order author-date-order relative-date regexp-ignore-case extended-regexp fixed-strings "
    "perl-regexp all-match invert-grep show-signature source log-size no-walk walk-reflogs children parents "
    "left-only right-only ancestry-path dense sparse show-pulls use-mailmap no-mailmap show-notes no-notes "
    "pickaxe-all pickaxe-regex count"
)
_LOG_VALUED = "max-count skip since after until before author committer grep date min-parents max-parents grep-reflog"
_LOG_OPTIONAL = "decorate pretty format notes mailmap exclude"
GIT_DANGEROUS = (
    "output output-directory ext-diff textconv open-files-in-pager no-index exec upload-pack receive-pack "
    "config-env filters edit add unset unset-all replace-all rename-section remove-section"
)
"""Options that write a file or run a program: no abbreviation may stand for them."""
_LOG = options(
    "pusnzwbRaiEFMCWtc", "nUSGL", long=f"{_DIFF_LONG} {_LOG_LONG}", long_valued=f"{_DIFF_VALUED} {_LOG_VALUED}",
    long_optional=f"{_DIFF_OPTIONAL} {_LOG_OPTIONAL}", numeric=True, operands="paths",
)
_DIFF = options("pusnzwbRaiMCWB", "U", long=_DIFF_LONG, long_valued=_DIFF_VALUED, long_optional=_DIFF_OPTIONAL,
                operands="paths")

SUBCOMMANDS: dict[str, Options] = {
    "log": _LOG, "show": _LOG, "whatchanged": _LOG, "shortlog": options("nsec", long="numbered summary email committer",
                                                                         long_optional="group format", operands="paths"),
    "diff": _DIFF,
    "status": options("sbuvz", "", long="short branch porcelain long verbose null show-stash ahead-behind "
                      "no-ahead-behind renames no-renames column no-column", long_optional="porcelain untracked-files "
                      "ignored ignore-submodules find-renames", operands="paths"),
    "blame": options("blstfnecpwMC", "LS", long="root show-stats show-name show-number porcelain line-porcelain "
                     "incremental score-debug minimal", long_valued="since date abbrev", long_optional="color-lines "
                     "color-by-age", operands="paths", path_options="-S"),
    "grep": options("iIvwnlLcoqhHzEFGPraW", "efABCm", long="cached untracked no-exclude-standard exclude-standard "
                    "recurse-submodules text ignore-case word-regexp invert-match full-name extended-regexp "
                    "basic-regexp perl-regexp fixed-strings line-number column files-with-matches name-only "
                    "files-without-match count null only-matching heading break show-function function-context "
                    "and or not all-match quiet no-color", long_valued="max-depth regexp file after-context "
                    "before-context context threads max-count", long_optional="color", operands="paths",
                    path_options="-f --file"),
    "rev-parse": options("q", long="verify quiet short sq-quote not all branches tags remotes symbolic "
                         "symbolic-full-name git-dir git-common-dir absolute-git-dir is-inside-git-dir "
                         "is-inside-work-tree is-bare-repository is-shallow-repository show-toplevel show-cdup "
                         "show-prefix show-superproject-working-tree show-ref-format local-env-vars default",
                         long_optional="abbrev-ref short", long_valued="since after until before", operands="paths"),
    "ls-files": options("cdmoiskutvfz", "x", long="cached deleted modified others ignored stage killed unmerged "
                        "directory no-empty-directory exclude-standard error-unmatch full-name recurse-submodules "
                        "debug eol sparse resolve-undo deduplicate", long_valued="exclude", long_optional="abbrev "
                        "format", operands="paths"),
    "ls-tree": options("dlrtz", long="long name-only name-status object-only full-name full-tree", long_optional="abbrev "
                       "format", operands="paths"),
    "cat-file": options("tspe", long="batch-all-objects buffer unordered follow-symlinks allow-unknown-type",
                        long_optional="batch batch-check", operands="paths"),
    "merge-base": options("a", long="all octopus independent is-ancestor fork-point", operands="paths"),
    "show-ref": options("dsq", long="head dereference verify quiet tags heads branches exists", long_optional="abbrev "
                        "hash", operands="paths"),
    "rev-list": _LOG,
    "describe": options("", long="all tags contains long always first-parent exact-match debug", long_valued="candidates "
                        "match exclude", long_optional="abbrev dirty broken", operands="paths"),
    "count-objects": options("vH", long="verbose human-readable", operands="none"),
    "name-rev": options("", long="tags all name-only no-undefined always", long_valued="refs exclude", operands="paths"),
    "for-each-ref": options("spq", long="shell perl python tcl", long_valued="count sort format points-at merged "
                            "no-merged contains no-contains", long_optional="color", operands="paths"),
}

_BRANCH_LIST = options("arvl", long="all remotes verbose list show-current ignore-case no-color no-column omit-empty",
                       long_valued="contains no-contains merged no-merged sort format points-at", long_optional="color "
                       "column abbrev", operands="paths")
_TAG_LIST = options("ln", long="list ignore-case no-column omit-empty", long_valued="contains no-contains merged "
                    "no-merged sort format points-at", long_optional="color column", operands="paths")
_CONFIG_READ = options("lz", "f", long="list get get-all get-regexp get-urlmatch global system local worktree "
                       "show-origin show-scope name-only null includes no-includes bool int bool-or-int path "
                       "expiry-date", long_valued="type default blob file", operands="text", path_options="-f --file")
_CONFIG_MODES = frozenset({"--list", "-l", "--get", "--get-all", "--get-regexp", "--get-urlmatch"})


def parse_options(spec: Options, args: list[str]) -> Parsed | None:
    """Options parsed with git's dangerous names refused in any abbreviated form."""
    return _parse_options(replace(spec, dangerous=spec.dangerous | _DANGEROUS), args)


_DANGEROUS = frozenset(GIT_DANGEROUS.split())


def judge_git(args: list[str]) -> Parsed | None:
    i = 0
    while i < len(args) and args[i] in ("--no-pager", "-P", "--no-optional-locks"):
        i += 1
    if i >= len(args):
        return None
    sub, rest = args[i], args[i + 1:]
    if sub in SUBCOMMANDS:
        return parse_options(SUBCOMMANDS[sub], rest)
    listing = _LISTINGS.get(sub)
    return listing(rest) if listing else None


def _branch(rest: list[str]) -> Parsed | None:
    """``git branch NAME`` creates a branch: a name is read-only only as a ``--list`` pattern."""
    parsed = parse_options(_BRANCH_LIST, rest)
    if parsed is None or (parsed.operands and not parsed.flags & {"-l", "--list"}):
        return None
    return parsed


def _tag(rest: list[str]) -> Parsed | None:
    parsed = parse_options(_TAG_LIST, rest)
    if parsed is None or (parsed.operands and not parsed.flags & {"-l", "--list"}):
        return None
    return parsed


def _remote(rest: list[str]) -> Parsed | None:
    if rest in ([], ["-v"], ["--verbose"]):
        return Parsed()
    if rest[:1] == ["get-url"]:
        return parse_options(options(long="push all", operands="paths", max_operands=1), rest[1:])
    return None


def _stash(rest: list[str]) -> Parsed | None:
    if rest[:1] == ["list"]:
        return parse_options(_LOG, rest[1:])
    if rest[:1] == ["show"]:
        return parse_options(_DIFF, rest[1:])
    return None


def _config(rest: list[str]) -> Parsed | None:
    """Only the reading modes: without one, ``git config NAME VALUE`` writes."""
    parsed = parse_options(_CONFIG_READ, rest)
    return parsed if parsed is not None and parsed.flags & _CONFIG_MODES else None


def _reflog(rest: list[str]) -> Parsed | None:
    """``git reflog`` and ``git reflog show`` list; ``expire`` and ``delete`` write."""
    if rest[:1] == ["show"]:
        rest = rest[1:]
    elif any(word in ("expire", "delete", "exists", "write") for word in rest):
        return None
    return parse_options(_LOG, rest)


_LISTINGS = {"branch": _branch, "tag": _tag, "remote": _remote, "stash": _stash, "config": _config, "reflog": _reflog}
