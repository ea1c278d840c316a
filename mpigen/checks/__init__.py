"""Checks of the emitted objects that no JSON schema states: the API server's own rules, in mpigen's
Python, run before anything is written out. `mpigen.checks.pod`: every pod template."""
