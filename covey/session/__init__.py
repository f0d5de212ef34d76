"""A covey session: ``Session`` drives one run, ``SessionOptions`` is the one list of its run
options. A module per job; README.md lists them."""

from covey.session.core import Session, run
from covey.session.detached import DetachedSession
from covey.session.options import SessionOptions
from covey.session.result import RunResult
from covey.session.watch import SessionBroken

__all__ = ["DetachedSession", "RunResult", "Session", "SessionBroken", "SessionOptions", "run"]
