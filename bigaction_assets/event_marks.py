"""Keys that stages add to event rows in memory, shared by the stage that sets and the one
that reads them (a low module: the SFT worker processes import it without the lake's imports)."""

GENERATED = "thought_generated"
"""Key set on an event whose `description` came from the thoughts table."""

IMAGE_NAME = "image_name"
"""Key set on an event whose screenshot is in `images`: the file name (`<image_sha>.<format>`)
an example refers to it by. An action's own image is never shown."""
