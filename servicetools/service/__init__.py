"""The local reference service (needs the ``service`` extra)."""
