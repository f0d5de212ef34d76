"""Seeing what agents do: the live tree, the notebook display and the session trace."""
