"""Client tests: the real local service over loopback, and a scripted loopback server
(`tests/support/flaky_server.py`) for the failures a real service rarely shows."""
