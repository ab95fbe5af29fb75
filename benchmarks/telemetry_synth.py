"""Synthetic agent telemetry as a web-agent library sends it (one record per step, the fields of
../shared/FORMATS.md), with personal data and secrets planted where real users leave them.

    python benchmarks/telemetry_synth.py samples/telemetry/client_batches.jsonl

writes the bundled sample (deterministic: the same bytes every time); `scale_batches` makes the
benchmark's 50-step batches.
"""

# ruff: noqa: E501 - the sample's texts, URLs and code are single long literals, as users write them

from __future__ import annotations

import random
import sys
import uuid
from pathlib import Path
from typing import Any

import orjson

DAY = "2025-05-14"
LOGIN_PAGE = """<html><head><title>Acme Billing - Sign in</title></head><body>
<nav><a href="/">Acme Billing</a> <a href="/help?ref=nav">Help</a></nav>
<main><h1>Sign in to your account</h1>
<form action="/session" method="post">
<label for="email">Email</label><input type="email" id="email" name="email">
<label for="pw">Password</label><input type="password" id="pw" name="pass">
<button type="submit" id="signin">Sign in</button></form>
<p>Questions? Call +1 415-555-0139 or write to support@acme-billing.example.com</p></main>
</body></html>"""
INVOICES_PAGE = """<html><head><title>Invoices</title></head><body><main>
<h1>Invoices for Ana Garcia (ana.garcia@example.org)</h1>
<table><tr><td>INV-2025-0412</td><td>$ 1,299.00</td><td><a href="/invoices/0412.pdf">PDF</a></td>
</tr></table><p>Paid by card ending 1111. Signed in from 203.0.113.42.</p></main></body></html>"""


def _ids(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _token(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _base(rng: random.Random, user: str, run: str, step: int, origin: str, level: str | None):
    record: dict[str, Any] = {
        "version": "1.2.3", "origin": origin, "user_id": user, "run_id": run, "step": step,
        "date": f"{DAY}T{9 + step:02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d}Z",
        "engine": "Navigation Engine", "success": True, "world_model_inference_time": 1.8,
        "world_model_input_tokens": 2150, "world_model_output_tokens": 96,
        "world_model_cost": 0.00654, "action_engine_input_tokens": 3310,
        "action_engine_output_tokens": 61, "action_engine_cost": 0.00904,
        "embedding_input_tokens": 812, "embedding_cost": 0.0000162,
        "total_step_cost": 0.0155962,
    }  # fmt: skip
    if level is not None:
        record["level"] = level
    return record


def _log(action: str, box: tuple[int, int, int, int], html: str = "") -> list[dict[str, Any]]:
    return [{
        "navigation_engine_input": "Instruction given to the navigation engine",
        "retrieved_html": [html] if html else [], "retrieval_time": 0.41,
        "retrieval_name": "OpsmSplitRetriever",
        "action_outcomes": [{
            "llm_raw_response": f"Thought: I act on the element.\nAction:\n```yaml\n{action}```",
            "action_generation_time": 2.2, "navigation_engine_full_prompt": "(prompt)",
            "navigation_engine_llm": "gpt-4o-2024-08-06", "action": action, "success": True,
            "error": "",
        }],
        "action_nb": 1,
        "vision_data": [{"bounding_box": dict(zip(("x1", "y1", "x2", "y2"), box, strict=True)),
                         "viewport_size": {"width": 1280, "height": 800}}],
    }]  # fmt: skip


def _invoice_run(rng: random.Random) -> list[list[dict[str, Any]]]:
    """HIGH, two batches: a login (password typed by xpath), then a Python step with a bearer
    token; the user's email is their unique id and appears in the objective."""
    user, run, level = _ids(rng), _ids(rng), "HIGH"
    objective = (
        "Log in to billing.acme.example.com as ana.garcia@example.org and download my April "
        "invoice; if it fails text me at +1 (415) 555-0187"
    )
    login = (
        "- actions:\n    - action:\n        args:\n          xpath: /html/body/main/form/input[1]\n"
        "          value: ana.garcia@example.org\n        name: setValue\n    - action:\n"
        "        args:\n          xpath: /html/body/main/form/input[2]\n"
        "          value: Tr0ub4dor&3x\n        name: setValueAndEnter\n"
    )
    step0 = _base(rng, user, run, 0, "lavague", level) | {
        "unique_user_id": "ana.garcia@example.org", "main_objective": objective,
        "url": "https://billing.acme.example.com/login?next=%2Finvoices&email=ana.garcia%40example.org",
        "tab_info": "Tab 0 - Acme Billing - Sign in", "html": LOGIN_PAGE,
        "world_model_prompt": f"Objective: {objective}\nCurrent page: sign-in form",
        "world_model_output": "Thoughts:\n- The sign-in form is shown; I enter ana.garcia@example.org "
        "and the password.\nNext engine: Navigation Engine\nInstruction: Sign in.",
        "instruction": "Sign in with the given email and password", "code": login,
        "engine_log": _log(login, (412, 300, 868, 340), LOGIN_PAGE),
    }  # fmt: skip
    jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJhbmEiLCJpYXQiOjE3MTU2NzgwMDB9." + _token(
        rng, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", 43
    )
    click = "- actions:\n    - action:\n        args:\n          xpath: /html/body/main/table/tr/td[3]/a\n        name: click\n"  # fmt: skip
    step1 = _base(rng, user, run, 1, "lavague", level) | {
        "unique_user_id": "ana.garcia@example.org", "main_objective": objective,
        "url": f"https://billing.acme.example.com/invoices?session={jwt}", "html": INVOICES_PAGE,
        "tab_info": "Tab 0 - Invoices", "world_model_output": "Thoughts:\n- Signed in; the "
        "April invoice INV-2025-0412 is listed.\nInstruction: Click the PDF link.",
        "instruction": "Click the PDF link of INV-2025-0412", "code": click,
        "engine_log": _log(click, (980, 212, 1012, 230), INVOICES_PAGE),
    }  # fmt: skip
    bearer = "Bearer " + _token(rng, "abcdefghijklmnopqrstuvwxyz0123456789", 40)
    step2 = _base(rng, user, run, 2, "lavague", level) | {
        "unique_user_id": "ana.garcia@example.org", "engine": "Python Engine",
        "url": "https://billing.acme.example.com/invoices/0412.pdf",
        "world_model_output": "Thoughts:\n- Save the PDF with the API; the session sends me "
        "the invoice for ana.garcia@example.org.\nInstruction: download it.",
        "code": f'import requests\nr = requests.get("https://api.acme-billing.example.com/v1/invoices/0412",\n    headers={{"Authorization": "{bearer}"}})\nopen("invoice.pdf", "wb").write(r.content)\n',
        "output": "Saved invoice.pdf (48 KB) for ana.garcia@example.org", "engine_log": [],
    }  # fmt: skip
    return [[step0, step1], [step2]]


def _table_run(rng: random.Random) -> list[list[dict[str, Any]]]:
    """MED from the Gradio demo: Selenium code types a phone number; a timeout names an IP."""
    user, run, level = _ids(rng), _ids(rng), "MED"
    objective = "Book a table for 2 at Trattoria Roma tonight at 8pm, name Li Wei, phone 415-555-0164"  # fmt: skip
    code0 = 'driver.find_element(By.XPATH, "//input[@id=\'party-size\']").send_keys("2")\ndriver.find_element(By.XPATH, "//input[@id=\'time\']").send_keys("20:00")\n'  # fmt: skip
    code1 = 'driver.find_element(By.ID, "guest-name").send_keys("Li Wei")\ndriver.find_element(By.ID, "guest-phone").send_keys("415-555-0164")\ndriver.find_element(By.ID, "book").click()\n'  # fmt: skip
    steps = []
    for step, (url, code, box) in enumerate([
        ("https://www.trattoria-roma.example.com/reserve?party=2", code0, (300, 410, 620, 450)),
        ("https://www.trattoria-roma.example.com/reserve/details?utm_source=agent", code1, (300, 520, 620, 560)),
    ]):  # fmt: skip
        record = _base(rng, user, run, step, "gradio", level) | {
            "objective": objective, "url": url, "tab_info": "Tab 0 - Trattoria Roma - Reserve",
            "world_model_output": f"Thoughts:\n- Step {step}: fill the reservation form for Li Wei "
            "(415-555-0164).\nInstruction: fill the form.", "instruction": "Fill the form",
            "code": code, "engine_log": _log(code, box),
        }  # fmt: skip
        steps.append(record)
    steps[1]["success"] = False
    steps[1]["engine_log"][0]["action_outcomes"][0]["error"] = (
        "TimeoutException: connection to 10.12.0.7:4444 timed out (proxy 2001:db8:85a3::8a2e:370:7334)"
    )
    return [steps]


def _checkout_run(rng: random.Random) -> list[list[dict[str, Any]]]:
    """LOW from the CLI: the card number and email in the code and URL must not survive, and
    LOW keeps no code or text at all, only the action names and the page's origin."""
    user, run, level = _ids(rng), _ids(rng), "LOW"
    code = 'driver.find_element(By.ID, "card").send_keys("4111 1111 1111 1111")\ndriver.find_element(By.ID, "pay").click()\n'  # fmt: skip
    record = _base(rng, user, run, 0, "lavague-qa", level) | {
        "objective": "Buy the blue mug and pay with my card 4111 1111 1111 1111",
        "url": "https://shop.example.com/checkout?email=li.wei%40example.net&cart=88213",
        "world_model_output": "Pay with 4111 1111 1111 1111", "code": code,
        "engine_log": _log(code, (500, 600, 780, 640)),
    }  # fmt: skip
    return [[record]]


def _transfer_run(rng: random.Random, user: str) -> list[list[dict[str, Any]]]:
    """MED, a Python-engine run with an IBAN and cloud and code-hosting keys pasted in."""
    run, level = _ids(rng), "MED"
    hf, ghp = "hf_" + _token(rng, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", 34), "ghp_" + _token(rng, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 36)  # fmt: skip
    sk = "sk-proj-" + _token(rng, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", 48)  # fmt: skip
    code = (
        f'import boto3, os\nos.environ["OPENAI_API_KEY"] = "{sk}"\n'
        's3 = boto3.client("s3", aws_access_key_id="AKIAIOSFODNN7EXAMPLE",\n'
        '    aws_secret_access_key="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")\n'
        f'repo = "https://{ghp}@github.com/acme/statements.git"\n'
    )
    steps = []
    for step in range(2):
        record = _base(rng, user, run, step, "lavague", level) | {
            "objective": f"Send 120 EUR to IBAN DE89 3704 0044 0532 0130 00 and archive the statement (my HF token is {hf})",
            "url": "https://bank.example.de/transfer?lang=en", "engine": "Python Engine" if step else "Navigation Engine",
            "world_model_output": "Thoughts:\n- Use the transfer form, beneficiary DE89370400440532013000.",
            "code": code if step else "driver.find_element(By.ID, 'iban').send_keys('DE89 3704 0044 0532 0130 00')\n",
        }  # fmt: skip
        steps.append(record)
    return [steps]


def _legacy_run(rng: random.Random, user: str) -> list[list[dict[str, Any]]]:
    """The earlier collector's fields: objectives, llm, a screenshot, a bounding box."""
    run = _ids(rng)
    record = _base(rng, user, run, 0, "lavague", "HIGH") | {
        "main_objective": "Find the opening hours of the city library",
        "objectives": ["Find the opening hours of the city library"],
        "llm": "gpt-4o-mini", "multi_modal_model": "gpt-4o", "url": "https://library.example.org/",
        "error_msg": "", "bounding_box": {"x1": 40, "y1": 90, "x2": 220, "y2": 120},
        "viewport_size": {"width": 1440, "height": 900}, "source_nodes": "<a href='/hours'>Hours</a>",
        "screenshot_before_action": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
        "code": "- actions:\n    - action:\n        args:\n          xpath: /html/body/nav/a[2]\n        name: click\n",
        "world_model_output": "Thoughts:\n- The hours are behind the Hours link.",
        "output": "Mon-Fri 9:00-19:00, Sat 10:00-16:00",
    }  # fmt: skip
    return [[record]]


def _opted_out(rng: random.Random) -> list[list[dict[str, Any]]]:
    """A sender at OFF and one that sent no level: nothing of theirs may be stored."""
    off = _base(rng, _ids(rng), _ids(rng), 0, "lavague", "OFF") | {"objective": "Email bob@example.com"}  # fmt: skip
    silent = _base(rng, _ids(rng), _ids(rng), 0, "gradio", None) | {"objective": "Call +1 415-555-0111"}  # fmt: skip
    return [[off], [silent]]


def sample_batches(seed: int = 6) -> list[list[dict[str, Any]]]:
    """The bundled sample: batches as clients post them."""
    rng = random.Random(seed)
    returning = _ids(rng)  # one sender with two runs
    return [
        *_invoice_run(rng), *_table_run(rng), *_checkout_run(rng),
        *_transfer_run(rng, returning), *_legacy_run(rng, returning), *_opted_out(rng),
    ]  # fmt: skip


def _vary(value: Any, step: int, key: str = "") -> Any:
    """The template's value made this step's own, as real steps differ: every text of more
    than a few words gets the step's number, planted values included."""
    if isinstance(value, dict):
        return {k: _vary(v, step, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_vary(v, step, key) for v in value]
    if not isinstance(value, str) or len(value) < 24:
        return value
    value = value.replace("ana.garcia@", f"ana.garcia.{step}@").replace("0412", f"{step:04d}")
    if key == "url":
        return f"{value}{'&' if '?' in value else '?'}step={step}"
    if value.lstrip().startswith("-") or key in ("code", "action"):
        return f"{value}# step {step}\n"  # a YAML or Python comment: still an action list
    if value.lstrip().startswith("<"):
        return value.replace("</body>", f"<p>Step {step} of the run.</p></body>")
    return f"{value} (step {step})"


def scale_batches(batches: int, steps: int = 50, seed: int = 8) -> list[list[dict[str, Any]]]:
    """`batches` batches of `steps` HIGH steps each, one run per batch, secrets planted; every
    step's texts are its own (caches of repeated texts cannot flatter a benchmark)."""
    rng = random.Random(seed)
    out = []
    for _ in range(batches):
        template = _invoice_run(rng)
        user, run = _ids(rng), _ids(rng)
        batch = []
        for step in range(steps):
            record = _vary(template[0][step % 2], step)
            record |= {"user_id": user, "run_id": run, "step": step}
            batch.append(record)
        out.append(batch)
    return out


def main(argv: list[str]) -> int:
    target = Path(argv[1]) if len(argv) > 1 else Path("samples/telemetry/client_batches.jsonl")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"".join(orjson.dumps(batch) + b"\n" for batch in sample_batches()))
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
