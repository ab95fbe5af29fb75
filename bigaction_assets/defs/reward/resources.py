"""The annotation app's store, as the pipeline reads and fills it."""

from pathlib import Path

import dagster as dg

from bigaction_assets.annotate.db import Database
from bigaction_assets.annotate.store import AnnotationStore


class AnnotationStoreResource(dg.ConfigurableResource):
    """The SQLite file the annotation app serves (`make annotate` uses the same default)."""

    path: str

    def exists(self) -> bool:
        return Path(self.path).is_file()

    def open(self) -> AnnotationStore:
        return AnnotationStore(Database(Path(self.path)))
