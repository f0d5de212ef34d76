"""``covey trust`` and ``covey mcp``: the person's decisions about a project folder, kept outside it
(covey/trust/), and the MCP servers a project configures."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from covey.errors import UserError


def add_trust_commands(sub: Any) -> None:
    trust = sub.add_parser("trust", help="trust a project folder: its allow rules, hooks, plugins and agent "
                                         "settings apply (covey trust --list, --revoke)")
    trust.add_argument("path", nargs="?", default=".", help="the folder (default: this one); folders under it too")
    what = trust.add_mutually_exclusive_group()
    what.add_argument("--list", action="store_true", help="the folders you trust")
    what.add_argument("--revoke", action="store_true", help="stop trusting the folder (and forget its MCP approvals)")
    trust.set_defaults(handler=trust_command)
    mcp = sub.add_parser("mcp", help="MCP servers: `covey mcp list` shows each and its state; `covey mcp approve "
                                     "NAME` lets a project's .mcp.json server start")
    mcp.add_argument("action", choices=["list", "approve", "revoke"])
    mcp.add_argument("names", nargs="*", help="approve / revoke: the .mcp.json servers (--all: every one)")
    mcp.add_argument("--all", action="store_true", help="approve / revoke: every server the project's .mcp.json names")
    mcp.add_argument("--cwd", default=".", help="the project")
    mcp.add_argument("--mcp-config", action="append", default=[], metavar="JSON_OR_FILE", help="list: also these servers")
    mcp.add_argument("--strict-mcp-config", action="store_true", help="list: only the --mcp-config servers")
    mcp.set_defaults(handler=mcp_command)


def _store() -> Any:
    from covey.trust import TrustStore

    return TrustStore(Path.home())


def trust_command(args: argparse.Namespace) -> int:
    store = _store()
    if args.list:
        for folder in store.folders():
            print(folder)
        return 0
    folder = Path(os.path.realpath(Path(args.path).expanduser()))
    if args.revoke:
        if not store.revoke(folder):
            raise UserError(f"covey trust --revoke: {folder} is not a folder you trusted with covey trust "
                            f"(covey trust --list shows them)")
        print(f"{folder} is no longer trusted")
        return 0
    store.trust(folder)
    print(f"{folder} is trusted: its settings' allow rules, hooks, plugins and agent settings apply; "
          f"its .mcp.json servers start once approved (covey mcp approve)")
    return 0


def mcp_command(args: argparse.Namespace) -> int:
    from covey.cli.flags import mcp_config_arg
    from covey.mcp.listing import mcp_list, project_server_names

    if args.action == "list":
        if args.names or args.all:
            raise UserError("covey mcp list takes no server names")
        given = [mcp_config_arg(value) for value in args.mcp_config]
        return mcp_list(args.cwd, given, strict=args.strict_mcp_config, env=dict(os.environ))
    folder = Path(os.path.realpath(Path(args.cwd).expanduser()))
    names = ["*"] if args.all else list(args.names)
    if not names:
        raise UserError(f"covey mcp {args.action}: name the servers (or --all)")
    if args.action == "revoke":
        gone = _store().unapprove(folder, names)
        print(f"approval withdrawn: {', '.join(gone)}" if gone else "none of those servers was approved here")
        return 0
    known = project_server_names(folder)
    unknown = [name for name in names if name != "*" and name not in known]
    if unknown:
        raise UserError(f"covey mcp approve: {folder / '.mcp.json'} names no server {unknown[0]!r} "
                        f"(it names: {', '.join(known) or 'none'})")
    _store().approve(folder, names)
    print(f"approved in {folder}: {'every .mcp.json server' if args.all else ', '.join(names)}", file=sys.stdout)
    return 0
