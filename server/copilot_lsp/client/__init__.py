"""Code that drives the language server from outside, as an editor does (over stdio):
the one-shot `complete` command and the benchmarks' scripted editors."""
