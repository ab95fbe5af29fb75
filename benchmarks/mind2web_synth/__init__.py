"""Write Mind2Web-shaped task files of any size, for the benchmarks.

The output follows the published layout of Mind2Web's raw task JSON: a JSON array of tasks, each
with `action_reprs` and `actions`; every action holds the captured page (`raw_html`, where every
element carries `backend_node_id` and the target `data_pw_testid_buckeye`), its `cleaned_html`,
the `operation`, and the positive and negative candidate elements. Each page is rendered from one
element tree into all three, so they always agree.

    python benchmarks/mind2web_synth --out /tmp/m2w.json --tasks 200 --steps 5 --html-kb 200
"""

from .tasks import iter_tasks, write_tasks

__all__ = ["iter_tasks", "write_tasks"]
