"""Kubernetes itself: the versions mpigen targets, their schemas and the offline validator.

`versions` (which Kubernetes minor versions have schemas installed), `schemas` (where a strict schema
comes from, and a fast compiled check of it) and `validator` (objects and pod templates against those
schemas, problems as `Issue`s). Nothing here knows MPIJobs, and nothing does I/O at import time.
"""
