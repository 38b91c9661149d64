"""Draft heads for speculative decoding: corpus, target features, EAGLE/Medusa training, export.

Everything here except `fingerprint` and `embedded` imports torch; import those modules only
where training or exporting happens, so the LSP server and `engine up` stay light.
"""
