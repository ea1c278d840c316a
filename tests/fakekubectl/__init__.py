"""Test doubles for the runtime scripts: a scripted fake kubectl and a recording fake API server."""
