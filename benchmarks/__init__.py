"""Measured figures; run by `make bench`, never by the test suite."""
