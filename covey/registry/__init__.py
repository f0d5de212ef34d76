"""The running-task registry: records and launch checks (``core``), the supervision rules (``supervisor``), and the Ray actor that adapts them (``actor``)."""
