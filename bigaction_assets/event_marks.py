"""Keys that stages add to event rows in memory, shared by the stage that sets and the one
that reads them (a low module: the SFT worker processes import it without the lake's imports)."""

GENERATED = "thought_generated"
"""Key set on an event whose `description` came from the thoughts table."""
