"""Context from the code itself: the open documents with their tree-sitter trees, kept
current edit by edit, and the snippets they yield."""
