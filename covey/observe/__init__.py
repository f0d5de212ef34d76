"""Seeing what agents do: the live tree, the session trace, and inspecting a running session."""
