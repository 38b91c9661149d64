"""`copilot-lsp bench engine`: speculative profiles against plain decoding, side by side.

prompts.py picks the prompt sets, runner.py sends the requests and reads the engine's
counters, report.py turns the records into tables and answers, plots.py draws them.
"""
