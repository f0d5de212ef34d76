"""The covey service: one long-lived process per user that is the Ray driver of every CLI run,
and the thin client the ``covey`` command speaks to it with (docs/service.md)."""
