"""The annotation app's store, where the lake resource says it is."""

from bigaction_assets.annotate.db import Database
from bigaction_assets.annotate.store import AnnotationStore
from bigaction_assets.defs.resources import LakeResource


def open_store(lake: LakeResource) -> AnnotationStore:
    """The store `make annotate` serves (created empty on first use)."""
    return AnnotationStore(Database(lake.annotation_store))
