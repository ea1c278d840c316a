"""Resource package: JSON Schemas shipped with mpigen (input schemas, vendored CRD schemas)."""
