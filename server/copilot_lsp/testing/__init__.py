"""Stand-ins for the engine, shared by the tests and the load benchmark."""
