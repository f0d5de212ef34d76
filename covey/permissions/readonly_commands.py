"""Which commands read only, and the options that keep them so (allow lists, never deny lists).

The set follows Claude Code's built-in read-only commands (``ls``, ``cat``, ``echo``,
``pwd``, ``head``, ``tail``, ``grep``, ``find``, ``wc``, ``which``, ``diff``, ``stat``,
``du``, ``cd`` and the read-only forms of ``git``) plus a few of the same kind. Each
lists the options it may take; an option not listed, or a command not here, is not
read-only: a person is asked. ``git`` is judged per subcommand in
:mod:`covey.permissions.readonly_git`.
"""

from __future__ import annotations

import re
from typing import Callable

from covey.permissions.options import Options, Parsed, options, parse_options
from covey.permissions.readonly_git import judge_git

Judge = Callable[[list[str]], "Parsed | None"]
"""The arguments' operands and read paths, or None when they are not read-only."""

_TEXT = dict(operands="text")
_NONE = dict(operands="none")

OPTIONS: dict[str, Options] = {
    "cat": options("AbeEnstTuv", long="show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting"),
    "head": options("qvz", "cn", long="quiet silent verbose zero-terminated", long_valued="bytes lines", numeric=True),
    "tail": options("qvzrfF", "cns", long="quiet silent verbose zero-terminated retry", long_valued="bytes lines "
                   "sleep-interval max-unchanged-stats pid", long_optional="follow", numeric=True),
    "tac": options("br", "s", long="before regex", long_valued="separator"),
    "wc": options("cmlLw", long="bytes chars lines max-line-length words", dangerous="files0-from"),
    "nl": options("p", "bdfhilnsvw", long="no-renumber", long_valued="body-numbering section-delimiter footer-numbering "
                  "header-numbering line-increment join-blank-lines number-format number-separator starting-line-number number-width"),
    "ls": options("aAbBcCdDfFgGhHiklmnNopqQrRsStuUvxXZ1", "IwT", long="all almost-all author escape ignore-backups "
                  "directory dired classify file-type full-time group-directories-first no-group human-readable si "
                  "hide-control-chars inode "
                  "numeric-uid-gid literal show-control-chars quote-name recursive reverse size context "
                  "version", long_valued="block-size format hide ignore quoting-style sort tabsize time-style width",
                  long_optional="color indicator-style time hyperlink"),
    "grep": options("EFGPiyvwxcLlmobHhnqsraIUzZT", "efmABCdD", long="extended-regexp fixed-strings basic-regexp "
                    "perl-regexp ignore-case no-ignore-case invert-match word-regexp line-regexp count "
                    "files-with-matches files-without-match only-matching byte-offset with-filename no-filename "
                    "line-number quiet silent no-messages recursive text null null-data "
                    "initial-tab line-buffered", long_valued="regexp file max-count after-context before-context "
                    "context include exclude exclude-dir exclude-from label devices directories binary-files",
                    long_optional="color colour", path_options="-f --file --exclude-from", operands="pattern-then-paths"),
    "rg": options("FHINPSUVabchilnopqsuvwx0", "ABCEefgjmMrtT", long="count count-matches files files-with-matches "
                  "files-without-match fixed-strings hidden ignore-case smart-case case-sensitive invert-match "
                  "json line-number no-line-number no-filename with-filename no-heading heading no-ignore no-ignore-vcs "
                  "no-messages null only-matching quiet stats trim unrestricted vimgrep word-regexp line-regexp "
                  "multiline multiline-dotall crlf no-config sort-files column no-column byte-offset passthru "
                  "files-with-matches", long_valued="regexp file glob iglob max-count type type-not max-depth "
                  "max-filesize context after-context before-context sort sortr encoding replace threads "
                  "max-columns color colors type-add", path_options="-f --file", operands="pattern-then-paths",
                  dangerous="pre pre-glob hostname-bin search-zip"),
    "stat": options("LftZ", "c", long="dereference file-system terse", long_valued="format printf"),
    "du": options("0abcDhHklmPsSx", "dBt", long="null all apparent-size bytes total dereference-args human-readable "
                  "si no-dereference separate-dirs summarize one-file-system count-links inodes",
                  long_valued="max-depth block-size threshold exclude time-style", long_optional="time"),
    "df": options("ahHiklPTx", "tB", long="all human-readable si inodes local portability print-type total",
                  long_valued="type exclude-type block-size output"),
    "diff": options("abBcdeEilnNpqrsStTuwyZ", "CUWFDIx", long="text ignore-blank-lines ignore-space-change ignore-case "
                    "ignore-all-space ignore-tab-expansion ignore-trailing-space ignore-file-name-case minimal "
                    "new-file unidirectional-new-file brief report-identical-files recursive show-c-function "
                    "side-by-side suppress-common-lines expand-tabs initial-tab strip-trailing-cr no-dereference",
                    long_valued="width show-function-line label ignore-matching-lines exclude "
                    "starting-file horizon-lines tabsize", long_optional="color context unified", max_operands=2),
    "cmp": options("blsz", "inz", long="print-bytes verbose quiet silent", long_valued="ignore-initial bytes", max_operands=4),
    "comm": options("123z", long="check-order nocheck-order total zero-terminated", long_valued="output-delimiter", max_operands=2),
    "cut": options("nsz", "bcdf", long="complement only-delimited zero-terminated", long_valued="bytes characters "
                   "delimiter fields output-delimiter"),
    "sort": options("bdfgiMhnRrVcCmsuz", "ktS", long="ignore-leading-blanks dictionary-order ignore-case "
                    "general-numeric-sort ignore-nonprinting month-sort human-numeric-sort numeric-sort random-sort "
                    "reverse version-sort check merge stable unique zero-terminated debug", long_valued="key "
                    "field-separator buffer-size sort", long_optional="check",
                    dangerous="output compress-program temporary-directory random-source files0-from"),
    "uniq": options("cdDiuz", "fsw", long="count repeated unique ignore-case zero-terminated", long_valued="skip-fields "
                    "skip-chars check-chars", long_optional="all-repeated group", max_operands=1),
    "column": options("tx", "sco", long="table fillrows", long_valued="separator output-separator output-width"),
    "file": options("bchiLNnprsvzZ0E", "eFP", long="brief no-dereference dereference mime mime-type mime-encoding "
                    "keep-going no-pad no-sandbox preserve-date raw special-files uncompress uncompress-noreport "
                    "print0", long_valued="exclude exclude-quiet separator parameter",
                    dangerous="magic-file compile files-from"),
    "tree": options("adfxpugshDFvtrUcNqQJXCniA", "LPI", long="noreport dirsfirst inodes device du prune matchdirs "
                    "ignore-case gitignore fflinks", long_valued="filelimit timefmt sort", long_optional="charset"),
    "jq": options("nrjaSCMecsRe", "", long="null-input raw-output join-output ascii-output sort-keys color-output "
                  "monochrome-output compact-output slurp raw-input exit-status tab seq stream", long_valued="indent",
                  operands="filter-then-paths"),
    "md5sum": options("btz", long="binary text tag zero"),
    "sha1sum": options("btz", long="binary text tag zero"),
    "sha256sum": options("btz", long="binary text tag zero"),
    "sha512sum": options("btz", long="binary text tag zero"),
    "readlink": options("femnqsvz", long="canonicalize canonicalize-existing canonicalize-missing no-newline quiet "
                        "silent verbose zero", **_TEXT),
    "realpath": options("emLPqsz", long="canonicalize-existing canonicalize-missing logical physical quiet strip "
                        "no-symlinks zero", long_valued="relative-to relative-base", **_TEXT),
    "basename": options("asz", "s", long="multiple zero", long_valued="suffix", **_TEXT),
    "dirname": options("z", long="zero", **_TEXT),
    "pwd": options("LP", **_NONE),
    "whoami": options(**_NONE),
    "id": options("agGnruzZ", long="context group groups name real user zero", **_TEXT),
    "uname": options("asnrvmpio", long="all kernel-name nodename kernel-release kernel-version machine processor "
                     "hardware-platform operating-system", **_NONE),
    "hostname": options("aAdfiIsy", long="alias all-fqdns domain fqdn long ip-address all-ip-addresses short yp nis",
                         dangerous="file boot", **_NONE),
    "which": options("as", long="all", **_TEXT),
    "printenv": options("0", long="null", **_TEXT),
    "true": options(**_TEXT),
    "false": options(**_TEXT),
    "tr": options("cCdst", long="complement delete squeeze-repeats truncate-set1", max_operands=2, **_TEXT),
}
OPTIONS["egrep"] = OPTIONS["fgrep"] = OPTIONS["grep"]
"""Commands judged by their option list alone."""

ANY_ARGUMENTS = frozenset({"echo", "printf", "type"})
"""Builtins that only print their arguments, a word computed at run time included — but ``printf -v NAME``
assigns (and evaluates an array subscript in NAME: ``printf -v 'a[$(cmd)]' x`` runs cmd), so printf's
first word must be known and not an option (:func:`_printf`)."""
FLAG_SAFE = frozenset({"echo", "type", "cat", "head", "tail", "wc", "pwd", "ls", "which", "stat", "du", "df", "basename",
                       "dirname", "realpath", "readlink", "whoami", "id", "uname", "nl", "cut", "tr",
                       "comm", "cmp", "printenv", "true", "false", "md5sum", "sha1sum", "sha256sum",
                       "sha512sum", "column", "tac", "grep", "egrep", "fgrep", "rg", "[["})
"""Commands none of whose listed options writes or runs anything, so an unquoted glob (which could
expand to a file named like an option) keeps them read-only (``ls *.ts``, ``wc -l src/*.py``; not
``printf *``, which a file named ``-v`` would turn into an assignment; ``[[`` expands no glob)."""

_UNARY = frozenset("-a -b -c -d -e -f -g -h -k -p -r -s -u -w -x -G -L -N -O -S -z -n -t".split())
_NOT_PATHS = frozenset({"-z", "-n", "-t"})
_BINARY = frozenset({"=", "==", "!=", "-nt", "-ot", "-ef"})
_NUMERIC = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})


def _test(args: list[str]) -> Parsed | None:
    """``test``, ``[`` and ``[[``: one test, maybe negated. Not ``-v`` (it evaluates an array subscript:
    ``test -v 'a[$(cmd)]'`` runs cmd), not ``=~`` (it sets BASH_REMATCH), and integer comparisons of
    integer literals only: ``[[`` evaluates their operands as arithmetic (``[[ 'a[$(cmd)]' -eq 0 ]]``)."""
    args = args[1:] if args[:1] == ["!"] else args
    if len(args) == 1:
        return Parsed(operands=list(args))
    if len(args) == 2 and args[0] in _UNARY:
        return Parsed(paths=[] if args[0] in _NOT_PATHS else [args[1]])
    if len(args) == 3 and args[1] in _BINARY:
        return Parsed(paths=[args[0], args[2]] if args[1].startswith("-") else [])
    if len(args) == 3 and args[1] in _NUMERIC and all(re.fullmatch(r"-?[0-9]+", a) for a in (args[0], args[2])):
        return Parsed()
    return None


def _printf(args: list[str]) -> Parsed | None:
    return None if not args or (args[0].startswith("-") and args[0] != "--") else Parsed(operands=list(args))


_FIND_TESTS = frozenset({
    "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-type", "-xtype",
    "-maxdepth", "-mindepth", "-newer", "-anewer", "-cnewer", "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin",
    "-size", "-user", "-group", "-uid", "-gid", "-perm", "-links", "-inum", "-samefile", "-lname", "-ilname",
    "-used", "-regextype", "-newermt", "-printf", "-fstype",
})
"""Find predicates that take one value (``-printf`` prints to stdout only)."""
_FIND_FLAGS = frozenset({
    "-print", "-print0", "-prune", "-o", "-or", "-a", "-and", "-not", "!", "(", ")", "-empty", "-depth",
    "-xdev", "-mount", "-readable", "-writable", "-executable", "-nouser", "-nogroup", "-true", "-false", "-quit", "-ls",
    "-daystart", "-noleaf", "-ignore_readdir_race", "-noignore_readdir_race",
})


def _find(args: list[str]) -> Parsed | None:
    """``find [-H|-L|-P] [PATH...] [EXPRESSION]``: paths, then only listed predicates (no ``-exec``,
    ``-delete``, ``-fprint``...)."""
    parsed, i = Parsed(), 0
    while i < len(args) and args[i] in ("-H", "-P"):
        i += 1
    while i < len(args) and not args[i].startswith("-") and args[i] not in ("!", "(", ")"):
        parsed.paths.append(args[i])
        i += 1
    while i < len(args):
        arg = args[i]
        if arg in _FIND_TESTS and i + 1 < len(args):
            i += 2
        elif arg in _FIND_FLAGS:
            i += 1
        else:
            return None
    return parsed


def _date(args: list[str]) -> Parsed | None:
    """``date`` shows the time; an operand that is not ``+FORMAT`` would set it."""
    spec = options("uRI", "dr", long="utc universal rfc-email", long_valued="date reference",
                   long_optional="iso-8601 rfc-3339", operands="text", dangerous="set file",
                   path_options="-r --reference")
    parsed = parse_options(spec, args)
    return parsed if parsed is not None and all(o.startswith("+") for o in parsed.operands) else None


def _any(args: list[str]) -> Parsed:
    return Parsed(operands=list(args))


def judge(name: str) -> Judge | None:
    """How ``name``'s arguments are judged, or None if it is not a read-only command."""
    if name == "printf":
        return _printf
    if name in ANY_ARGUMENTS:
        return _any
    if name in ("test", "[", "[["):
        return _test
    if name == "find":
        return _find
    if name == "date":
        return _date
    if name == "git":
        return judge_git
    spec = OPTIONS.get(name)
    return (lambda args: parse_options(spec, args)) if spec is not None else None


def is_known(name: str) -> bool:
    return judge(name) is not None
