"""HTTP route handlers, one module per resource."""
