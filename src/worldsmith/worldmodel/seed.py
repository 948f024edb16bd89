"""Worlds seeded by code: a task's initial state drawn from its world schema with Faker
(names, emails, phones, addresses, companies, dates, amounts), seeded so the same task seed
gives the same world. References point at keys that exist; every collection gets several
records, so the records a task does not touch are its distractors (they must stay as they are).
A domain pack's seeders (code in its folder) are passed in by the caller (`finish`,
`worldmodel.packs.finish_seed`; `packs.seed_world` passes it): this module never imports the packs.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable
from typing import Any

from faker import Faker

from worldsmith.records import CollectionSpec, FieldSpec, World
from worldsmith.worldmodel.schema import seeding_order

PRODUCTS = (
    "kettle",
    "desk lamp",
    "backpack",
    "monitor",
    "headphones",
    "coffee grinder",
    "rain jacket",
    "office chair",
    "blender",
    "keyboard",
    "water bottle",
    "router",
    "notebook",
    "travel mug",
    "bike helmet",
    "phone case",
    "yoga mat",
    "toaster",
)
PHRASES = (
    "Refund for a damaged item",
    "Wrong size delivered",
    "Login does not work",
    "Invoice shows the wrong amount",
    "Package arrived late",
    "Change the delivery address",
    "Question about the warranty",
    "Cancel the extra charge",
    "Upgrade to the yearly plan",
    "Reset the account password",
    "Missing part in the box",
    "Double charge on the card",
)
LABELS = (
    "alpha",
    "harbor",
    "ledger",
    "orbit",
    "maple",
    "summit",
    "delta",
    "cobalt",
    "atlas",
    "juniper",
    "pioneer",
    "beacon",
    "granite",
    "meadow",
    "falcon",
    "lumen",
    "nova",
    "quartz",
)
ADJECTIVES = (
    "blue",
    "compact",
    "wireless",
    "steel",
    "large",
    "classic",
    "red",
    "portable",
    "bamboo",
    "silver",
    "quiet",
    "family",
)


# What a field named like this holds, when its schema documents no example: the words of its name
# pick the list (a crawled `language` filter gets "python", not a random English word).
NAMED_VALUES: dict[str, tuple[str, ...]] = {
    "language": ("python", "typescript", "go", "rust", "java"),
    "lang": ("en", "de", "fr", "es", "ja"),
    "locale": ("en-US", "de-DE", "fr-FR", "es-ES"),
    "region": ("us-east-1", "eu-west-1", "ap-southeast-2", "us-west-2"),
    "zone": ("us-east-1a", "eu-west-1b", "europe-west4-a"),
    "database": ("analytics", "sales", "warehouse", "staging"),
    "schema": ("public", "reporting", "raw"),
    "table": ("orders", "customers", "events", "invoices"),
    "branch": ("main", "develop", "release-2.4", "feature-login"),
    "repo": ("api-gateway", "web-client", "data-pipeline", "docs-site"),
    "owner": ("acme-labs", "northwind", "octo-org"),
    "symbol": ("AAPL", "MSFT", "NVDA", "AMZN", "TSLA"),
    # a symbol's *name* is code's (the crawled tools that have one: "name of the function/class to find tests for")
    "symbol_name": ("parse_config", "UserService", "load_settings", "render_page", "retry_request"),
    "function": ("parse_config", "load_settings", "render_page", "retry_request"),
    "class_name": ("UserService", "OrderRepository", "HttpClient", "ConfigLoader"),
    "priority": ("urgent", "high", "medium", "low"),
    "severity": ("error", "warning", "info"),
    "currency": ("USD", "EUR", "GBP", "JPY"),
    "repo_path": ("/srv/git/api-gateway", "/srv/git/web-client", "/home/dev/data-pipeline"),
    "path": ("reports/q3-summary.xlsx", "src/app.ts", "notes/meeting.md", "data/sales.csv"),
    "filename": ("q3-summary.xlsx", "app.ts", "meeting.md", "sales.csv"),
    "folder": ("reports", "archive", "shared", "drafts"),
    "sheet": ("Summary", "Q3", "Budget", "Sheet1"),
    "channel": ("general", "deploys", "support", "random"),
    "subreddit": ("python", "machinelearning", "dataisbeautiful", "homelab"),
    "host": ("db-01.internal", "web-02.internal", "cache-01.internal"),
    "namespace": ("default", "payments", "monitoring"),
    "cluster": ("prod-eu", "staging-us", "dev"),
    "environment": ("production", "staging", "development"),
    "version": ("1.4.2", "2.0.0", "0.9.7", "3.1.0"),
    "tag": ("v1.4.2", "latest", "stable", "beta"),
    "label": ("bug", "enhancement", "documentation", "urgent"),
    "color": ("red", "green", "blue", "amber"),
    "unit": ("kg", "cm", "litre", "hour"),
    "genre": ("jazz", "fiction", "documentary", "rock"),
    "origin": ("Berlin", "Zurich", "Lyon", "Vienna"),
    "destination": ("Munich", "Geneva", "Paris", "Prague"),
    "station": ("Zurich HB", "Bern", "Basel SBB", "Lausanne"),
    "location": ("Berlin", "Toronto", "Osaka", "Lisbon"),
    "species": ("human", "mouse", "zebrafish", "yeast"),
    "gene": ("TP53", "BRCA1", "EGFR", "MYC"),
    "job": ("build-api", "nightly-tests", "deploy-web", "lint"),
    "fullname": ("team/build-api", "team/nightly-tests", "ops/deploy-web"),
    "pipeline": ("build-api", "nightly-tests", "deploy-web"),
    "workflow": ("ci.yml", "release.yml", "nightly.yml"),
    "project": ("apollo", "atlas", "mercury", "zephyr"),
    "team": ("platform", "payments", "growth", "data"),
    "model": ("gpt-4o-mini", "llama-3-8b", "mistral-7b"),
    "status": ("active", "pending", "completed", "failed"),
    "state": ("running", "success", "failed", "queued"),
    "timezone": ("Europe/Berlin", "America/New_York", "Asia/Tokyo", "UTC"),
}

# another word for the same thing: its list is that word's
NAMED_SYNONYMS = {
    "db": "database",
    "repository": "repo",
    "org": "owner",
    "ticker": "symbol",
    "file": "path",
    "directory": "folder",
    "hostname": "host",
    "env": "environment",
    "context": "cluster",
    "function_name": "function",
}


# What a record's name or title is, by what the record is (its collection's entity, read from its last
# word): a crawled paper's section is "Related work", a Grafana dashboard "Checkout funnel", not "atlas-falcon"
ENTITY_NAMES: dict[str, tuple[str, ...]] = {
    "section": ("Introduction", "Related work", "Methods", "Results", "Discussion", "Conclusion"),
    "paper": (
        "Sparse attention for long documents",
        "Retrieval-augmented generation for legal text",
        "Few-shot protein structure prediction",
        "Measuring bias in multilingual language models",
    ),
    "article": (
        "How we cut our cloud bill in half",
        "A field guide to database indexes",
        "Lessons from a year of on-call",
        "Why our builds got faster",
    ),
    "dataset": ("customer-churn", "sales-2025", "sensor-readings", "support-tickets"),
    "dashboard": ("API latency", "Checkout funnel", "Node health", "Error budget"),
    "panel": ("Requests per second", "p95 latency", "CPU usage", "Error rate"),
    "alert": ("High error rate", "Disk almost full", "Pod restarts", "Slow queries"),
    "dag": ("daily_sales_etl", "hourly_events_sync", "weekly_report", "ml_feature_refresh"),
    "task": ("extract_orders", "load_warehouse", "send_report", "train_model"),
    "document": ("Q3 summary", "Meeting notes", "Release plan", "Budget 2026"),
    "slide": ("Agenda", "Roadmap", "Q3 results", "Next steps"),
    "presentation": ("Quarterly review", "Product roadmap", "Team offsite"),
    "note": ("Grocery list", "Project ideas", "Meeting notes", "Travel plans"),
    "feed": ("Hacker News", "BBC World", "The Verge", "Ars Technica"),
    "collection": ("support-docs", "product-faq", "research-notes", "release-notes"),
    "index": ("logs-2026.03", "products", "customers", "audit-events"),
    "drug": ("ibuprofen", "amoxicillin", "metformin", "atorvastatin"),
    "indicator": ("Life expectancy at birth", "Infant mortality rate", "Health expenditure per capita"),
    "game": ("Catan", "Carcassonne", "Ticket to Ride", "Azul"),
    "symbol": ("Resistor", "Capacitor", "LED", "Op-amp"),
    "footprint": ("R_0603", "C_0805", "SOT-23", "SOIC-8"),
    "net": ("GND", "VCC", "SDA", "SCL"),
    "product": ("wireless kettle", "steel water bottle", "bamboo desk lamp", "quiet keyboard"),
}
ENTITY_SYNONYMS = {"doc": "document", "file": "document", "memory": "note", "publication": "paper", "post": "article"}

# A sentence field's topic, by the words of the record's entity and the field's name; the first topic that
# shares a word wins, and a record no topic fits gets a plain description of itself
TOPICS: tuple[tuple[frozenset[str], tuple[str, ...]], ...] = (
    (
        frozenset({"abstract", "paper", "publication", "citation", "scholar", "europepmc", "arxiv", "study"}),
        (
            "We study sparse attention for long documents and halve the memory it needs.",
            "A benchmark of retrieval-augmented generation on legal questions.",
            "Protein structures predicted from few labelled examples.",
            "We measure gender bias in multilingual language models.",
        ),
    ),
    (
        frozenset({"news", "headline", "tweet", "feed", "story", "hashtag"}),
        (
            "Markets rally after the rate decision",
            "New battery plant opens in Nevada",
            "Chipmaker beats quarterly estimates",
            "City council approves the transit plan",
        ),
    ),
    (
        frozenset({"ticket", "order", "refund", "return", "complaint", "chargeback", "reason", "case", "dispute"}),
        PHRASES,
    ),
    (
        frozenset({"commit", "pull", "issue", "bug", "build", "dag", "job", "pipeline", "repo", "code", "function"}),
        (
            "Fix the login timeout on mobile",
            "Add retries to the export job",
            "Upgrade the database driver",
            "Speed up the nightly build",
        ),
    ),
)

# string fields whose values are numbers or handles, by the last word of their name
NUMERIC_WORDS = {"open", "close", "high", "low", "price", "volume", "amount", "total", "income", "score", "rating"}
HANDLE_WORDS = {"username", "login", "handle", "screen_name"}
HEX_WORDS = {"revision", "sha", "commit", "hash"}


def entity_word(entity: str) -> str:
    """The word that says what a record is: the last word of its entity ("pyroscope label" -> "label")."""
    word = entity.lower().replace("_", " ").split()[-1] if entity.strip() else ""
    return ENTITY_SYNONYMS.get(word, word)


def _named(word: str) -> tuple[str, ...] | None:
    return NAMED_VALUES.get(NAMED_SYNONYMS.get(word, word))


def named_value(f: FieldSpec, rng: random.Random) -> Any:
    """A value from NAMED_VALUES for the field's whole name, else for the last word of its name
    that has a list there (`base_branch` -> a branch), or None."""
    for w in (f.name.lower(), *reversed(f.name.lower().split("_"))):
        values = _named(w)
        if values is not None:
            return rng.choice(values)
    return None


def variant(value: Any, n: int) -> Any:
    """Another value like `value` for a field whose values must differ: "notes/meeting-2.md",
    "main-2", 7 + n."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value + n
    text = str(value)
    stem, dot, ext = text.rpartition(".")
    if dot and stem and ext.isalnum() and len(ext) <= 5 and not ext.isdigit():
        return f"{stem}-{n}.{ext}"
    return f"{text}-{n}"


def next_key(c: CollectionSpec, records: list[dict[str, Any]]) -> str:
    """The key the next created record gets: one past the highest number used (deterministic)."""
    numbers = []
    for r in records:
        tail = str(r.get(c.key, "")).rsplit("-", 1)[-1]
        if tail.isdigit():
            numbers.append(int(tail))
    return f"{c.id_prefix}-{max(numbers, default=1000) + 1}"


def _sentence(entity: str, field: str, rng: random.Random) -> str:
    words = {*entity.lower().replace("_", " ").split(), *field.lower().split("_")}
    for topic, sentences in TOPICS:
        if words & topic:
            return rng.choice(sentences)
    if field in ("description", "summary", "note", "comment"):  # a plain description of the record itself
        return f"The {rng.choice(NAMED_VALUES['team'])} team's {entity.replace('_', ' ') or 'record'}"
    return rng.choice(PHRASES)


def _value(
    f: FieldSpec,
    fake: Faker,
    rng: random.Random,
    today: dt.date,
    keys: dict[str, list[str]],
    index: int,
    entity: str = "",
) -> Any:
    if f.ref is not None:
        return rng.choice(keys[f.ref])
    if f.type == "boolean":
        return rng.random() < 0.5
    if f.examples and f.type == "string":
        return rng.choice(f.examples)
    fmt = f.format
    last = f.name.lower().rsplit("_", 1)[-1]
    if f.type == "string" and not f.enum:
        what = entity_word(entity)
        if f.name in ("name", "title") and (names := ENTITY_NAMES.get(what)):
            return rng.choice(names)
        if f.name == "name" and fmt == "label" and what:  # "Maple shipment", not "maple-juniper"
            return f"{rng.choice(LABELS).capitalize()} {what}"
        if last in NUMERIC_WORDS:  # (every numeric word is one word: the name's last word covers the whole name)
            return f"{rng.uniform(5, 900):.2f}"
        if f.name.lower() in HANDLE_WORDS or last in HANDLE_WORDS:
            return f"{fake.user_name()}{index}"
        if last in HEX_WORDS:
            return "".join(rng.choice("0123456789abcdef") for _ in range(7))
        if fmt == "sentence":
            return _sentence(entity, f.name, rng)
    if f.type == "string" and fmt in ("text", "code", "label") and (v := named_value(f, rng)) is not None:
        return v
    if f.type == "integer" or fmt == "quantity":
        return rng.randint(1, 12) if fmt == "quantity" else rng.randint(1, 500)
    if f.type == "number" or fmt in ("money", "percent"):
        return round(rng.uniform(5, 900), 2) if fmt != "percent" else round(rng.uniform(0, 100), 1)
    if fmt == "person_name":
        return fake.name()
    if fmt == "email":
        return f"{fake.user_name()}{index}@{fake.free_email_domain()}"
    if fmt == "phone":
        return fake.numerify("+1-###-###-####")
    if fmt == "address":
        return fake.street_address()
    if fmt == "city":
        return fake.city()
    if fmt == "country":
        return fake.country()
    if fmt == "company":
        return fake.company()
    if fmt == "product":
        return f"{rng.choice(ADJECTIVES)} {rng.choice(PRODUCTS)}"
    if fmt == "date":
        return (today + dt.timedelta(days=rng.randint(-90, 60))).isoformat()
    if fmt == "datetime":
        return dt.datetime.combine(
            today + dt.timedelta(days=rng.randint(-90, 60)), dt.time(rng.randint(8, 19), rng.choice((0, 15, 30, 45)))
        ).isoformat()
    if fmt == "time":
        return f"{rng.randint(8, 19):02d}:{rng.choice((0, 15, 30, 45)):02d}"
    if fmt == "url":
        return fake.url()
    if fmt == "code":
        return fake.bothify("??-####").upper()
    if fmt == "sentence":
        return rng.choice(PHRASES)
    if fmt == "label":
        return f"{rng.choice(LABELS)}-{rng.choice(LABELS)}"
    if f.name in ("name", "title"):
        return f"{rng.choice(ADJECTIVES)} {rng.choice(PRODUCTS)}"
    # a field code cannot read (`game`, `document`): a name-like value, not a random English word
    return f"{rng.choice(LABELS)}-{rng.choice(LABELS)}"


# makes a pack world's seeded state consistent: (world, state, seed) -> a new state
Finish = Callable[[World, dict[str, Any], int], dict[str, Any]]


def seed_state(
    world: World, seed: int, records: tuple[int, int] = (3, 5), finish: Finish | None = None
) -> dict[str, list[dict[str, Any]]]:
    """A world state for `world`: between records[0] and records[1] records per collection. A pack's
    world is finished by its seeders (`finish`); without one it is the caller's bug (ValueError)."""
    if world.pack and finish is None:
        raise ValueError(
            f"world {world.world_id} is pack {world.pack!r}: pass finish= (worldmodel.packs.finish_seed), "
            "or call packs.seed_world"
        )
    rng = random.Random(seed)
    fake = Faker("en_US")
    fake.seed_instance(seed)
    today = dt.date.fromisoformat(world.today)
    state: dict[str, list[dict[str, Any]]] = {}
    keys: dict[str, list[str]] = {}
    for c in seeding_order(world):
        start = rng.randint(10, 89) * 100
        rows = []
        seen: dict[str, set[Any]] = {f.name: set() for f in c.fields if f.unique}
        n = rng.randint(*records)
        # every enum value shows up (a refusal task needs a record in a final state), in a seeded order
        enums = {f.name: [f.enum[i % len(f.enum)] for i in range(n)] for f in c.fields if f.enum}
        for values in enums.values():
            rng.shuffle(values)
        for i in range(n):
            row: dict[str, Any] = {c.key: f"{c.id_prefix}-{start + i + 1}"}
            for f in c.fields:
                value = enums[f.name][i] if f.enum else _value(f, fake, rng, today, keys, i, c.entity)
                base, n = value, 2
                while f.unique and value in seen[f.name]:
                    value, n = variant(base, n), n + 1
                if f.unique:
                    seen[f.name].add(value)
                row[f.name] = value
            rows.append(row)
        state[c.name] = rows
        keys[c.name] = [r[c.key] for r in rows]
    out = {c.name: state[c.name] for c in world.collections}
    if world.pack and finish is not None:  # a domain pack's seeders make the records consistent
        out = finish(world, out, seed)
    return out
