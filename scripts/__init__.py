"""Operator commands: compile, deploy, run, anchor, demo."""
