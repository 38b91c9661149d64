"""The embedded completion engine: the model it serves and the vLLM process that serves it."""
