"""The commands beside check and run, one module a command word: key, state, stamp."""
