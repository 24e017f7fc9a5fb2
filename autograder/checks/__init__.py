"""One module of hidden checks per assignment; each registers its checks on import."""
