"""The pieces pages are made of: header, search form, result cards, filters, footer, hidden
parts (a closed menu, a cookie banner), and the scripts and styles that fill raw pages."""

from __future__ import annotations

import random
from typing import Any

import orjson

from .page import HIDDEN, Node, h

Theme = dict[str, Any]


class Widgets:
    """Builds a theme's pieces, drawing words, prices and class names from `rng`."""

    def __init__(self, theme: Theme, classes: list[str], rng: random.Random) -> None:
        self.theme, self.classes, self.rng = theme, classes, rng

    def cls(self, **attrs: str) -> dict[str, str]:
        """Attributes with a class name first, as most elements of real pages have."""
        return {"class": self.rng.choice(self.classes), **attrs}

    def header(self, site: str) -> Node:
        pick, nav = self.rng.choice, self.theme["nav"]
        menu = h("ul", self.cls(role="menu"), *[
            h("li", {}, h("a", {"href": f"/c/{i}", "role": "menuitem"}, pick(self.theme["titles"])))
            for i in range(4)
        ])  # fmt: skip
        links = [h("a", self.cls(href=f"/{w.lower().replace(' ', '-')}"), w) for w in nav]
        return h(
            "header", self.cls(role="banner"),
            h("a", self.cls(href="/", aria_label=f"{site.title()} home"),
              h("img", {"src": f"/assets/{site}/logo.svg", "alt": site.title()})),
            h("nav", self.cls(aria_label="Primary"), h("div", {}, links[0], menu), *links[1:]),
            h("button", self.cls(type="button", aria_label="Account"),
              h("svg", {"viewBox": "0 0 24 24"}, h("path", {"d": "M12 12a5 5 0 1 0 0-10"})),
              "Sign in"),
        )  # fmt: skip

    def search_form(self) -> Node:
        fields = [
            h("div", self.cls(), h("label", {"for": name}, label),
              h("input", self.cls(id=name, type="text", name=name, aria_label=label,
                                  placeholder=placeholder, autocomplete="off")))
            for label, name, placeholder in self.theme["fields"]
        ]  # fmt: skip
        selects = [
            h(
                "select",
                self.cls(aria_label=label),
                *[h("option", {"value": o}, o) for o in options],
            )
            for label, options in self.theme["selects"]
        ]
        submit = h("button", self.cls(type="submit"), self.rng.choice(self.theme["submit"]))
        heading = h("h2", self.cls(), self.theme["subdomain"])
        return h(
            "form", self.cls(action="/search", method="get"), heading, *fields, *selects, submit
        )

    def card(self) -> Node:
        pick, theme = self.rng.choice, self.theme
        low, high = theme["price"]
        title, sku = pick(theme["titles"]), self.rng.randrange(10**6, 10**7)
        return h(
            "article", self.cls(data_sku=str(sku)),
            h("img", self.cls(src=f"/img/{sku}.jpg", alt=title)),
            h("h3", self.cls(), h("a", self.cls(href=f"/p/{sku}"), title)),
            h("p", self.cls(), pick(theme["details"])),
            h("strong", self.cls(), f"${self.rng.randint(low, high)}.{self.rng.randrange(100):02}"),
            h("button", self.cls(type="button"), pick(theme["ctas"])),
            h("button", self.cls(type="button", aria_label="Save to favorites"),
              h("svg", {"viewBox": "0 0 24 24"}, h("path", {"d": "M12 21l-1-1C5 15 2 12 2 8"}))),
        )  # fmt: skip

    def filters(self) -> Node:
        boxes = [
            h(
                "label",
                self.cls(),
                h("input", {"type": "checkbox", "name": f"f{i}", "aria_label": name}),
                name,
            )
            for i, name in enumerate(self.theme["filters"])
        ]
        return h("section", self.cls(aria_label="Filters"), h("h3", {}, "Filter by"), *boxes)

    def promo(self) -> Node:
        return h(
            "div", self.cls(role="region"),
            h("h3", self.cls(), f"Save on {self.rng.choice(self.theme['titles'])}"),
            h("p", self.cls(), self.rng.choice(self.theme["details"])),
            h("a", self.cls(href="/deals"), "See deals"),
        )  # fmt: skip

    def footer(self, site: str) -> Node:
        words = ["About us", "Careers", "Accessibility", "Privacy policy", "Terms of use"]
        links = [h("li", {}, h("a", {"href": f"/{i}"}, w)) for i, w in enumerate(words)]
        return h(
            "footer", self.cls(role="contentinfo"), h("ul", self.cls(), *links),
            h("small", self.cls(), f"© 2023 {site.title()}. All rights reserved."),
        )  # fmt: skip

    def hidden_part(self) -> Node:
        """A part of the page that is not shown at capture time (its targets have no box)."""
        if self.rng.random() < 0.5:
            return h(
                "div", self.cls(role="dialog", aria_label="Cookie consent", style=HIDDEN),
                h("p", {}, "We use cookies to improve your experience."),
                h("button", self.cls(type="button"), "Accept all"),
                h("button", self.cls(type="button"), "Manage preferences"),
            )  # fmt: skip
        links = [
            h("li", {}, h("a", {"href": f"/m/{i}"}, w)) for i, w in enumerate(self.theme["nav"])
        ]
        return h("nav", self.cls(aria_label="Mobile menu", style=HIDDEN), h("ul", {}, *links))

    def script(self, size: int) -> Node:
        """An inline script holding page state as JSON, about `size` characters long."""
        items: list[str] = []
        length = 0
        while length < size:
            item = {
                "id": f"{self.rng.getrandbits(64):016x}",
                "name": self.rng.choice(self.theme["titles"]),
                "price": self.rng.randint(*self.theme["price"]),
                "tracking": {"list": "search", "position": len(items), "slot": self.rng.random()},
            }
            items.append(orjson.dumps(item).decode())
            length += len(items[-1]) + 1
        return h("script", {"type": "text/javascript"}, f"window.__STATE__=[{','.join(items)}];")

    def style(self, size: int) -> Node:
        """A stylesheet of rules on the page's class names, about `size` characters long."""
        rules, length = [], 0
        while length < size:
            name = self.rng.choice(self.classes).split()[0]
            rule = (
                f".{name}{{display:{self.rng.choice(['flex', 'block', 'grid'])};"
                f"margin:{self.rng.randint(0, 24)}px;color:#{self.rng.getrandbits(24):06x}}}"
            )
            rules.append(rule)
            length += len(rule)
        return h("style", {"data_emotion": "css"}, "".join(rules))
