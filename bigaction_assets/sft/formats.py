"""Names the SFT stage renders and counts by (a module of its own: worker processes need them
without the contracts' imports, which cost a worker ~1 s to start)."""

SFT_FORMATS = ("openai", "sharegpt", "openhands")

# Where an action's thought came from: recorded with it, ADP's thought cache, the thoughts
# stage, or nowhere. An example names the kinds its actions show, joined by "+" in this order.
THOUGHT_KINDS = ("recorded", "adp_generated", "generated", "none")
