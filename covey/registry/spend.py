"""What an agent run spent: its record's figures raised to those of a report of the run.

A run is reported more than once (a kill is recorded before the agent's own report,
progress updates come before both): each figure is the most any of them said.
"""

from __future__ import annotations

from covey.runtime.records import FinalReport, RunRecord


def count_spend(record: RunRecord, report: FinalReport) -> float:
    """Raise the record's figures, and its report's, to ``report``'s where larger; the cost added."""
    if report.usage.total >= record.usage.total:
        record.usage, record.model_usage = report.usage, report.model_usage or record.model_usage
    record.tool_uses = max(record.tool_uses, report.tool_uses)
    record.turns = max(record.turns, report.turns or 0)
    if report.rate_waits:  # the agent's own report has the latest (a kill's has none)
        record.rate_waits = list(report.rate_waits)
    added = max(0.0, report.cost_usd - record.cost_usd)
    record.cost_usd += added
    kept = record.report if record.report is not None else report
    duration_ms = max(kept.duration_ms, report.duration_ms)
    record.report = kept.model_copy(update={
        "usage": record.usage, "model_usage": record.model_usage, "tool_uses": record.tool_uses,
        "turns": record.turns, "cost_usd": round(record.cost_usd, 6), "duration_ms": duration_ms,
    })
    return added
