"""Draft heads for speculative decoding: corpus, target features, one recipe per head type
(EAGLE, EAGLE-3, Medusa: `recipes/`), the training run around them (`train`), export.

Everything here except `fingerprint` and `embedded` imports torch; import those modules only
where training or exporting happens, so the LSP server and `engine up` stay light.
"""
