"""Context from the code itself: tree-sitter trees per document and the snippets they yield."""
