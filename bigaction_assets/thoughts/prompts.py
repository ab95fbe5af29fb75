"""Versioned prompt templates for thoughts; their hash is part of the asset's code version.

Templates live in `prompts/<version>/` as `system.txt` and `user.txt` (`$task`, `$history` and
`$action` are filled in with `string.Template`, so braces in page text or JSON need no
escaping). A new wording is a new folder, so old prompts stay reproducible.
"""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path
from string import Template

PROMPT_VERSION = "v1"
PROMPTS_DIR = Path(__file__).parent / "prompts"
FILES = ("system.txt", "user.txt")


@cache
def templates(version: str = PROMPT_VERSION) -> tuple[str, Template]:
    folder = PROMPTS_DIR / version
    system = (folder / "system.txt").read_text(encoding="utf-8").strip()
    user = Template((folder / "user.txt").read_text(encoding="utf-8").strip())
    return system, user


@cache
def template_sha(version: str = PROMPT_VERSION) -> str:
    """sha256 over the version's template files, in a fixed order."""
    digest = hashlib.sha256()
    for name in FILES:
        digest.update(name.encode() + b"\0")
        digest.update((PROMPTS_DIR / version / name).read_bytes())
    return digest.hexdigest()


def thought_messages(
    task: str, history: str, action: str, version: str = PROMPT_VERSION
) -> list[dict[str, str]]:
    """The chat messages that ask for one thought."""
    system, user = templates(version)
    text = user.substitute(task=task, history=history, action=action)
    return [{"role": "system", "content": system}, {"role": "user", "content": text}]
