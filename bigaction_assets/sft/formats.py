"""The SFT formats the stage renders, by name (a module of its own: worker processes need the
names without the contracts' imports)."""

SFT_FORMATS = ("openai", "sharegpt", "openhands")
