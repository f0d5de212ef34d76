"""``covey.map``: one agent per row of a dataset, each row once, resumable (docs/map.md)."""
