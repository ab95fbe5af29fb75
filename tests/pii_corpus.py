"""A PII corpus: realistic telemetry records with one planted secret each, of every kind in every
kind of field, plus look-alikes that must survive (versions, dates, order numbers, prices, CSS,
hashes, uuids). Written by us; every value is fake (example.* domains, 555-01xx numbers, test
cards, documentation IBANs and keys, random tokens)."""

# ruff: noqa: E501 - the corpus is long literal texts, as users write them

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SECRETS: dict[str, list[str]] = {
    "EMAIL": [
        "ana.garcia@example.org",
        "li.wei+shop@mail.example.com",
        "J.Smith@Example.co.uk",
        "support-team@acme-billing.example.com",
        "o'brien.k@example.ie",
    ],
    "PHONE": [
        "+1 415-555-0132",
        "(212) 555-0175",
        "+44 20 7946 0958",
        "+33 6 12 34 56 78",
        "415.555.0199",
        "+49 30 901820",
    ],
    "CARD": [
        "4111 1111 1111 1111",
        "5555-5555-5555-4444",
        "378282246310005",
        "6011111111111117",
        "4012888888881881",
    ],
    "IBAN": [
        "DE89 3704 0044 0532 0130 00",
        "GB82WEST12345698765432",
        "FR14 2004 1010 0505 0001 3M02 606",
        "NL91ABNA0417164300",
        "ES9121000418450200051332",
    ],
    "IP": [
        "192.168.1.23",
        "10.12.0.7",
        "203.0.113.42",
        "2001:db8:85a3::8a2e:370:7334",
        "fe80::1ff:fe23:4567:890a",
    ],
    "API_KEY": [
        "sk-proj-Hq3v9XwT0pLmN4sZr8YbKc2VdF6gJ1aE5uOiQ7tR",
        "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",
        "AKIAIOSFODNN7EXAMPLE",
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "github_pat_11ABCDEFG0aBcDeFgHiJkL_mnOpQrStUvWxYz0123456789abcdEFGH",
    ],
    "JWT": [
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFuYSJ9.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJhY21lIiwiZXhwIjoxNzE1Njc4MDAwfQ.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk",
    ],
    "PASSWORD": ["Tr0ub4dor&3x", "correct-horse-battery", "S3cure!Pass#2025", "hunter2hunter2"],
}
# Bearer and similar credentials are TOKEN: written as the header they travel in.
TOKENS = [
    "9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    "ya29.a0AfH6SMBx7Qk2Lz9Vb0N1m2",
    "tok_2bT9xLq8Wm3Zp7Rc",
]
SECRETS["TOKEN"] = TOKENS

# Look-alikes a scrubber must leave alone.
DECOYS = [
    "lavague 1.2.3",
    "Chrome/120.0.6099.109",
    "order #2024-05-14-0032",
    "on 2024-05-14 at 10:30:45",
    "INV-2025-0412",
    "$ 1,299.00",
    "a::before { content: '' }",
    "width: 1280px; height: 800px",
    "sha256 3f2a9c1b7d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4",
    "uuid 7f3c2a1e-9b8d-4c6f-a5e4-3d2c1b0a9f8e",
    "Basic information about the plan",
    "token usage and cost",
    "the password field is empty",
    "zip 10001, ext 4455",
    "logo@2x.png",
    "session started",
    "tracking 1Z999AA10123456784",
    "population 1234567890",
]


@dataclass(frozen=True)
class Case:
    kind: str
    secret: str
    field: str
    record: dict[str, Any]


def _text_fields(secret: str) -> dict[str, dict[str, Any]]:
    """The same secret in each kind of field a telemetry record has."""
    return {
        "objective": {"objective": f"Please handle this for me: {secret}. Thanks!"},
        "chain_of_thought": {
            "world_model_output": f"Thoughts:\n- The page shows {secret}.\nNext engine: Navigation Engine"
        },
        "code": {"code": f'driver.find_element(By.ID, "note").send_keys("{secret}")\n'},
        "typed_value": {
            "code": f"- actions:\n    - action:\n        args:\n          xpath: /html/body/form/input[1]\n          value: {secret}\n        name: setValue\n"
        },
        "url_query": {"url": f"https://www.example.com/search?q={_quote(secret)}&page=2"},
        "html": {
            "html": f"<html><body><div class='card'><span>Contact</span> <b>{secret}</b></div></body></html>"
        },
        "engine_log": {
            "engine_log": [
                {
                    "action_outcomes": [
                        {
                            "error": f"ValueError while sending {secret}",
                            "llm_raw_response": f"I will type {secret}",
                        }
                    ]
                }
            ]
        },
    }


def _quote(value: str) -> str:
    from urllib.parse import quote_plus

    return quote_plus(value)


def _token_fields(token: str) -> dict[str, dict[str, Any]]:
    header = f"Authorization: Bearer {token}"
    return {
        "code": {"code": f'requests.get(url, headers={{"Authorization": "Bearer {token}"}})\n'},
        "engine_log": {
            "engine_log": [{"action_outcomes": [{"error": f"401 for request with {header}"}]}]
        },
        "chain_of_thought": {"world_model_output": f"Thoughts:\n- Send the header {header} again."},
        "url_query": {"url": f"https://api.example.com/v1/items?access_token={token}"},
    }


LOGIN = (
    "<html><body><form><input type='email' id='email'><input type='password' id='pw' "
    "name='pass'><button id='go'>Sign in</button></form></body></html>"
)


def _password_fields(password: str) -> dict[str, dict[str, Any]]:
    """Passwords are known only from where they are typed: a password input."""
    return {
        "selenium_by_id": {
            "html": LOGIN,
            "code": f'driver.find_element(By.ID, "pw").send_keys("{password}")\n',
        },
        "selenium_by_xpath": {
            "html": LOGIN,
            "code": f"driver.find_element(By.XPATH, '/html/body/form/input[2]').send_keys('{password}')\n",
        },
        "yaml_xpath": {
            "html": LOGIN,
            "code": f"- actions:\n    - action:\n        args:\n          xpath: /html/body/form/input[2]\n          value: {password}\n        name: setValueAndEnter\n",
        },
        "playwright_selector": {"code": f'page.fill("#password", "{password}")\n'},
        "two_statements": {
            "html": LOGIN,
            "code": f'box = driver.find_element(By.NAME, "pass")\nbox.clear()\nbox.send_keys("{password}")\n',
        },
        "url_query": {"url": f"https://www.example.com/login?user=ana&password={_quote(password)}"},
    }


def cases() -> list[Case]:
    found = []
    for kind, values in SECRETS.items():
        for value in values:
            if kind == "PASSWORD":
                fields = _password_fields(value)
            elif kind == "TOKEN":
                fields = _token_fields(value)
            else:
                fields = _text_fields(value)
            for name, record in fields.items():
                found.append(Case(kind, value, name, record))
    return found


def decoy_record() -> dict[str, Any]:
    text = " | ".join(DECOYS)
    return {"objective": text, "world_model_output": text, "html": f"<p>{text}</p>",
            "url": "https://www.example.com/items?page=2&sort=price&lang=en"}  # fmt: skip
