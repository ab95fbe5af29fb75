"""Calls to any OpenAI-compatible chat model: retries, a durable cache, prices and a budget."""
