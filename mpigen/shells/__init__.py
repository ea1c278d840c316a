"""The command shells: one module per command (render, validate, schema, krm, kustomize_plugin), each a
thin layer that reads input, calls the pure core and writes what its `Outcome` says; plus `common` (the
I/O every command shares) and `outdir` (render's render-directory I/O). A command never imports another.
"""
