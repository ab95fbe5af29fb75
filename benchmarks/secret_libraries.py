"""Our scrubber against detect-secrets (Yelp's maintained secret scanner) on the PII corpus.

    uv pip install --python .venv/bin/python detect-secrets   # not a project dependency
    .venv/bin/python benchmarks/secret_libraries.py

For the credential kinds detect-secrets also covers (API keys, JWTs, bearer tokens, passwords):
recall on the corpus's cases (a case counts as found when the scanner reports a value that is
part of the planted secret or holds it; ours must replace it whole), false alarms on the
look-alike record and on the bundled Mind2Web demo pages, and MB of text per CPU-second over
every record of the corpus. Our side is the scrubber the collector runs, all kinds on (it also
looks for emails, phones, cards, IBANs and IPs, which detect-secrets does not).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "tests"), str(HERE.parent)]

from pii_corpus import cases, decoy_record  # noqa: E402

from bigaction_assets.privacy.passwords import nested_strings  # noqa: E402
from bigaction_assets.privacy.scrub import Scrubber  # noqa: E402

KINDS = ("API_KEY", "JWT", "TOKEN", "PASSWORD")
PAGES = HERE.parent / "landing" / "mind2web" / "train_demo.json"


def detect_secrets_values(texts: list[str], scratch: Path) -> list[str]:
    """Values detect-secrets reports for `texts`, scanned as a file is (its usual filters and
    entropy limits; its ad-hoc line scan reports every candidate string)."""
    from detect_secrets import SecretsCollection

    path = scratch / "record.txt"
    path.write_text("\n".join(texts), encoding="utf-8")
    secrets = SecretsCollection()
    secrets.scan_file(str(path))
    return [found.secret_value or "" for _, found in secrets]


def ours_scrub(record: dict[str, Any]) -> str:
    scrubber = Scrubber()
    scrubber.add_passwords(record)
    return json.dumps(scrubber.value(record))


def cpu_rate(work, texts_mb: float) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        work()
        best = min(best, time.process_time() - started)
    return texts_mb / best


def main() -> None:
    from detect_secrets.settings import default_settings

    corpus = [case for case in cases() if case.kind in KINDS]
    pages = [a["raw_html"] for task in json.loads(PAGES.read_text()) for a in task["actions"]]
    found: dict[str, Counter[str]] = {"ours": Counter(), "detect-secrets": Counter()}
    total: Counter[str] = Counter()
    scratch = Path(tempfile.mkdtemp(prefix="secret-libraries-"))
    with default_settings():
        for case in corpus:
            total[case.kind] += 1
            values = detect_secrets_values(list(nested_strings(case.record)), scratch)
            # located: a reported value inside the secret (some detectors report only a
            # prefix, `ghp`) or holding it whole
            if any(v and (v in case.secret or case.secret in v) for v in values):
                found["detect-secrets"][case.kind] += 1
            if case.secret not in ours_scrub(case.record):
                found["ours"][case.kind] += 1
        alarms = {
            "detect-secrets": (
                len(detect_secrets_values(list(nested_strings(decoy_record())), scratch)),
                len(detect_secrets_values(pages, scratch)),
            ),
        }
        texts = [t for case in cases() for t in nested_strings(case.record)]
        size = sum(len(t.encode()) for t in texts) / 1e6
        speed = {
            # one file holding every text: its natural unit, no per-record cost
            "detect-secrets": cpu_rate(lambda: detect_secrets_values(texts, scratch), size),
            "ours": cpu_rate(lambda: [ours_scrub(case.record) for case in cases()], size),
        }
    shutil.rmtree(scratch)
    decoys, page = Scrubber(), Scrubber()
    decoys.value(decoy_record())
    for html in pages:
        page.value({"html": html})
    alarms["ours"] = (sum(decoys.counts.values()), sum(page.counts.values()))
    header = ["scanner", *(f"{k} recall" for k in KINDS), "look-alike alarms",
              f"alarms on {len(pages)} pages", "MB/s per core"]  # fmt: skip
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name in ("ours", "detect-secrets"):
        recalls = [f"{found[name][k]}/{total[k]}" for k in KINDS]
        print(f"| {name} | " + " | ".join(recalls) + f" | {alarms[name][0]} | {alarms[name][1]}"
              f" | {speed[name]:.2f} |")  # fmt: skip
    print(f"\n{size:.2f} MB of record text ({len(texts)} texts, {len(cases())} records)")


if __name__ == "__main__":
    main()
