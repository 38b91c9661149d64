"""The runtime client of an OpenAI-compatible engine, used on every keystroke: httpx streaming
(SSE), health, the acceptance monitor and failover router, metrics, TLS, and the provider that
hands the pipeline one engine for the current settings. Starting and preparing vLLM is
serving/'s job."""
