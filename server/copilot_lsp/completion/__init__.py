"""The completion pipeline: pure asyncio, no pygls and no httpx imports."""
