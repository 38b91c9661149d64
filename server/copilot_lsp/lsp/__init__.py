"""The LSP layer: pygls glue around the service (service.py). With client/, the only package
that imports pygls."""
