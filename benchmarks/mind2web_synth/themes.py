"""The generator's vocabulary: one theme per kind of site, and the words class names are made of."""

from __future__ import annotations

import random
from typing import Any

# One theme per paragraph: `key: value | value`; a repeated key continues its list.
# `field NAME: label | placeholder` is a text input typed from `slot NAME`; tasks use the slots.
_THEME_TABLE = """
websites: united | delta | aa | jetblue
domain: Travel
subdomain: Airlines
nav: Book | My trips | Travel info | Deals | Check in | Flight status | Help
field origin: From | City or airport
field destination: To | City or airport
field date: Depart | MM/DD/YYYY
select Travelers: 1 Adult | 2 Adults | 3 Adults | 2 Adults, 1 Child
select Cabin: Economy | Premium economy | Business | First
submit: Find flights | Search flights
slot origin: New York | Boston | Seattle | Denver | Atlanta | Chicago | Miami
slot destination: Los Angeles | San Francisco | Orlando | Las Vegas | Honolulu | Dallas
slot date: 04/21/2023 | 05/02/2023 | 05/19/2023 | 06/10/2023 | 07/04/2023
task: Find the cheapest one-way flight from {origin} to {destination} on {date}.
task: Search for a round trip from {origin} to {destination} leaving {date}.
titles: Nonstop | 1 stop in Denver | 1 stop in Chicago | 1 stop in Houston | 2 stops
details: Departs 7:05 AM, arrives 10:41 AM | Departs 12:30 PM, arrives 6:02 PM
details: Seats left at this price: 3 | Includes one personal item
ctas: Select | Select fare | View seats | Details
price: 89 | 640
filters: Nonstop | 1 stop | Morning departures | Refundable fares | Wi-Fi

websites: budget | enterprise | hertz | avis
domain: Travel
subdomain: Car rental
nav: Reservations | Vehicles | Deals | Locations | Business | Help
field city: Pick-up location | Airport, city or zip code
field date: Pick-up date | MM/DD/YYYY
field date2: Return date | MM/DD/YYYY
select Vehicle type: All vehicles | Cars | SUVs | Vans | Trucks
select Sort by: Featured | Price: Low to High | Price: High to Low | Passengers
submit: Select my car | Browse vehicles
slot city: Denver | Orlando | Phoenix | Salt Lake City | Newark | Austin
slot date: 05/03/2023 | 05/12/2023 | 06/01/2023 | 06/15/2023
slot date2: 05/06/2023 | 05/14/2023 | 06/04/2023 | 06/18/2023
task: Rent the cheapest SUV in {city} from {date} to {date2}.
task: Find an economy car at {city} airport picked up {date} and returned {date2}.
titles: Economy | Compact | Intermediate | Standard SUV | Full-size SUV | Minivan
details: Toyota Corolla or similar | Jeep Grand Cherokee or similar | 5 seats, 2 bags
ctas: Select | Pay now | Pay later
price: 29 | 140
filters: Automatic | Unlimited mileage | Electric | Free cancellation

websites: target | walmart | costco
domain: Shopping
subdomain: Department
nav: Categories | Deals | What's New | Pickup and Delivery | Registry
field query: Search | What can we help you find?
field zip: ZIP code | Enter ZIP
select Sort by: Relevance | Price: low to high | Price: high to low | Best seller
select Qty: 1 | 2 | 3 | 4 | 5
submit: Search | Go
slot query: aa batteries | paper towels | air fryer | kids rain boots | coffee maker
slot zip: 10203 | 60614 | 94110 | 30309 | 02139
task: Add the best-selling {query} to the cart for pickup near {zip}.
task: Search for {query} and sort the results by price from low to high.
titles: Energizer MAX AA Batteries - 24pk | Ninja 4qt Air Fryer | Tide PODS 81ct
titles: Cat & Jack Kids' Rain Boots | Keurig K-Mini Coffee Maker
details: Ready within 2 hours | Shipping: get it by Tue, Apr 18 | 4.7 out of 5 stars
ctas: Add to cart | Choose options | Pick it up
price: 3 | 120
filters: Pickup today | Same day delivery | Under $25 | 4 stars and up

websites: resy | opentable | yelp
domain: Service
subdomain: Restaurant
nav: Discover | Guides | Gift cards | For restaurants | Help
field query: Search | Search restaurants, cuisines, etc.
field city: Location | City or neighborhood
select Party size: 1 guest | 2 guests | 3 guests | 4 guests | 6 guests
select Time: 6:00 PM | 6:30 PM | 7:00 PM | 7:30 PM | 8:00 PM
submit: Let's go | Find a table
slot query: italian | sushi | thai | steakhouse | vegan brunch | tapas
slot city: Brooklyn | Chicago | Austin | San Francisco | Washington DC
task: Reserve a table for 4 at a {query} restaurant in {city} tonight at 7:30 pm.
task: Book the earliest available {query} dinner for two in {city}.
titles: Lilia | Frankies 457 Spuntino | Sushi Nakazawa | Uchi | Kin Khao | Jaleo
details: Italian · Williamsburg · $$$ | Thai · Tenderloin · $$ | Booked 84 times today
ctas: 5:30 PM | 7:00 PM | 7:30 PM | 8:45 PM | Notify me
price: 25 | 120
filters: Outdoor seating | Bar seating | Open now | Takes reservations
"""


def _parse_themes(table: str) -> list[dict[str, Any]]:
    """One dict per paragraph: `fields` as (label, name, placeholder), `selects` as (label,
    options), `slots` name -> values, `price` as (low, high), other keys as lists."""
    themes = []
    for paragraph in table.strip().split("\n\n"):
        theme: dict[str, Any] = {"fields": [], "selects": {}, "slots": {}}
        for line in paragraph.splitlines():
            key, _, rest = line.partition(": ")
            values = rest.split(" | ")
            kind, _, name = key.partition(" ")
            if kind == "field":
                theme["fields"].append((values[0], name, values[1]))
            elif kind in ("select", "slot"):
                theme[kind + "s"].setdefault(name, []).extend(values)
            elif kind in ("domain", "subdomain"):
                theme[kind] = rest
            elif kind == "price":
                theme[kind] = (int(values[0]), int(values[1]))
            else:
                theme.setdefault(kind, []).extend([rest] if kind == "task" else values)
        theme["selects"] = list(theme["selects"].items())
        themes.append(theme)
    return themes


THEMES = _parse_themes(_THEME_TABLE)
WORDS = """card list item grid header footer nav menu link button wrapper inner content title price
badge media image body meta rating actions container row col primary secondary label field input
group dropdown panel tile promo hero banner chip icon text caption"""
UTILITIES = """flex items-center justify-between mt2 mb3 pa3 ph2 pv1 br2 b black bg-white w-100
relative absolute dn m_db tc f6 f5 lh-copy truncate overflow-hidden pointer shadow-1"""


def class_names(rng: random.Random, count: int = 64) -> list[str]:
    """Class attributes in the style of CSS modules plus utility classes (~60 characters each)."""
    letters = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    words, utilities = WORDS.split(), UTILITIES.split()
    names = []
    for _ in range(count):
        module = f"{rng.choice(words)}-{rng.choice(words)}_{rng.choice(words)}__"
        module += "".join(rng.choice(letters) for _ in range(5))
        names.append(" ".join([module, *rng.sample(utilities, rng.randint(1, 5))]))
    return names
