"""Standardized episodes read back from the lake, for every stage that works from them."""
