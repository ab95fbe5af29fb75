"""Reruns that skip what is up to date: content fingerprints of inputs, stamps of outputs."""
