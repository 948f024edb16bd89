"""Worlds inferred by code from crawled MCP servers' tools: collections, keys and fields read
off the tools' names, input schemas, output schemas and annotations, and each tool bound to
an action on one collection (`ToolBinding`), so code executes it on a seeded JSON state.

Nothing here calls a model, and the same tools always give the same worlds. A tool is bound
only where the binding says what the tool does (`search_papers(query, max_results)` lists
`papers` with a text search and a limit; `get_stock_info(ticker)` gets a `stocks` record by
its ticker); every other tool is left unbound with a short reason a report can group by
(`compute_only`, `side_effect_outside`, `unsupported_schema`, ...). The tool keeps its real
input schema: every property is bound to a field or named in the binding's `ignored`.

The reading of a tool, in order:
1. its name in words (camelCase, snake_case, kebab-case), less the server's own prefix
   (`bc_`, `chroma_`, `workspace_`) and suffixes such as `_tool`;
2. a verb (first word, or last word for `order_get` style names) and its action: get, list,
   create, update (`pause_dag` is an update that sets `paused`), delete; or a reason:
   calculators and checkers are `compute_only`, runners and senders `side_effect_outside`;
3. a noun, the collection: the words after the verb less qualifiers (`all`, `latest`, `by ...`);
   an attribute noun (`get_abstract(paper_id)`, `get_current_stock_price(symbol)`) names
   the record its identifier points at;
4. each parameter: the record's identifier (a key, or a natural key such as a path, a
   ticker, a name), a parent's identifier (a match or a filter on a reference field),
   a value (a field), a text search, a limit, or an ignored output/pagination/order control.

Collections of a server are then sized (at most MAX_COLLECTIONS a world, MAX_FIELDS a
collection, the most used kept); a server with more collections is split into several
worlds along networkx communities of its collection graph, and servers of one category
that share collections (the same nouns and identifiers) are merged into one world where
the merged world still fits.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from dataclasses import field as dfield
from typing import Any

import networkx as nx

from worldsmith.records import CollectionSpec, FieldSpec, ToolBinding, ToolSpec, World, content_id
from worldsmith.worldmodel.schema import derive_rules, id_prefix, plural, singular, world_problem

MAX_COLLECTIONS = 6
MAX_FIELDS = 10
MIN_FIELDS = 2

# --------------------------------------------------------------------------- vocabulary

GET_VERBS = {"get", "fetch", "read", "show", "describe", "retrieve", "view", "lookup", "open", "inspect", "peek"}
LIST_VERBS = {"list", "search", "find", "query", "browse", "filter", "discover"}
CREATE_VERBS = {"create", "add", "new", "insert", "post", "record", "register", "save", "make"}
UPDATE_VERBS = {"update", "set", "edit", "rename", "assign", "modify", "patch", "change", "mark", "put", "move"}
DELETE_VERBS = {"delete", "remove", "drop", "destroy", "purge"}
# update verbs that set a field to a fixed value: verb -> (field, value)
FIXED_VERBS: dict[str, tuple[str, Any]] = {
    "pause": ("paused", True),
    "unpause": ("paused", False),
    "resume": ("paused", False),
    "enable": ("enabled", True),
    "disable": ("enabled", False),
    "close": ("status", "closed"),
    "archive": ("status", "archived"),
    "unarchive": ("status", "active"),
    "cancel": ("status", "cancelled"),
    "approve": ("status", "approved"),
    "reject": ("status", "rejected"),
    "complete": ("status", "completed"),
    "reopen": ("status", "open"),
    "flag": ("flagged", True),
    "unflag": ("flagged", False),
    "lock": ("locked", True),
    "unlock": ("locked", False),
    "star": ("starred", True),
    "unstar": ("starred", False),
}
COMPUTE_VERBS = {
    "calculate",
    "calc",
    "compute",
    "convert",
    "analyze",
    "analyse",
    "validate",
    "check",
    "verify",
    "format",
    "parse",
    "generate",
    "render",
    "export",
    "plot",
    "diff",
    "estimate",
    "score",
    "evaluate",
    "translate",
    "summarize",
    "summarise",
    "compare",
    "count",
    "detect",
    "diagnose",
    "recommend",
    "suggest",
    "trace",
    "test",
    "simulate",
    "lint",
    "transform",
    "resolve",
    "encode",
    "decode",
    "hash",
    "visualize",
    "rank",
    "classify",
    "multiply",
    "sum",
    "divide",
    "subtract",
    "tokenize",
    "extract",
    "scan",
    "audit",
    "match",
    "greet",
    "crosstab",
    "explain",
    "predict",
    "forecast",
    "measure",
    "inspect_diff",
    "preview",
    "split",
    "merge",
    "sort",
    "expand",
    "embed",
    "bundle",
    "flatten",
    "annotate",
    "duplicate",
    "copy",
    "upgrade",
    "optimize",
    "profile",
}
SIDE_VERBS = {
    "send",
    "email",
    "run",
    "execute",
    "exec",
    "trigger",
    "shell",
    "download",
    "publish",
    "deploy",
    "restart",
    "install",
    "commit",
    "push",
    "pull",
    "checkout",
    "reset",
    "play",
    "broadcast",
    "connect",
    "disconnect",
    "refresh",
    "reindex",
    "sync",
    "import",
    "upload",
    "apply",
    "build",
    "init",
    "initialize",
    "start",
    "stop",
    "kill",
    "retry",
    "notify",
    "announce",
    "autoroute",
    "fill",
    "stamp",
    "replay",
    "index",
    "load",
    "clear",
    "write",
    "append",
    "submit",
    "watch",
    "unwatch",
    "release",
    "capture",
    "reparse",
    "fork",
    "clone",
    "open_in",
    "wait",
    "place",
    "wire",
    "route",
    "bootstrap",
    "plan",
    "advance",
}
# words that are not the collection: qualifiers of a read
QUALIFIERS = {
    "all",
    "the",
    "a",
    "an",
    "my",
    "current",
    "latest",
    "recent",
    "rich",
    "top",
    "hot",
    "hottest",
    "rising",
    "popular",
    "trending",
    "featured",
    "available",
    "historical",
    "new",
    "full",
    "single",
    "one",
    "many",
    "multiple",
    "every",
    "existing",
    "raw",
    "batch",
    "frontpage",
}
# nouns that are a part of a record, not records of their own: get_abstract(paper_id)
ATTRIBUTES = {
    "abstract",
    "outline",
    "details",
    "detail",
    "info",
    "information",
    "summary",
    "metadata",
    "profile",
    "status",
    "content",
    "contents",
    "text",
    "config",
    "configuration",
    "properties",
    "property",
    "description",
    "body",
    "overview",
    "price",
    "quote",
    "data",
    "settings",
    "id",
    "ids",
    "name",
    "names",
    "value",
    "bounds",
    "attributes",
}
# attribute nouns that are a field of the record a get answers with: noun -> field
ATTRIBUTE_FIELDS = {
    "abstract": "abstract",
    "outline": "outline",
    "summary": "summary",
    "status": "status",
    "content": "content",
    "contents": "content",
    "text": "text",
    "description": "description",
    "body": "body",
    "overview": "overview",
    "price": "price",
    "quote": "quote",
    "profile": "profile",
}
# nouns whose records would be a computation over the state, not records of it
DERIVED = {
    "stats",
    "statistics",
    "history",
    "report",
    "graph",
    "diagnostics",
    "trend",
    "trends",
    "comparison",
    "analysis",
    "lineage",
    "impact",
    "radius",
    "usage",
    "matrix",
    "diff",
    "health",
    "performance",
    "network",
    "tree",
    "map",
    "hierarchy",
    "eligibility",
    "anomaly",
    "image",
    "distribution",
    "breakdown",
    "aggregate",
    "recommendations",
}
# records a "history" lists, one per point in time: price_history(symbol) lists the symbol's prices,
# dag_run_history(dag_id) the dag's runs; other histories (a player's, a seller's) stay derived views
HISTORY_RECORDS = {
    "price",
    "rate",
    "run",
    "job_run",
    "dag_run",
    "build",
    "order",
    "transaction",
    "payment",
    "deployment",
    "execution",
    "event",
}
# verbs that are also the noun of a name (topics_index: the topics' index, a list of them)
NOUN_VERBS = {"index"}
SERVER_INFO = {"version", "health", "config", "configuration", "guide", "help", "schema", "examples", "options"}
CUT_WORDS = {"by", "from", "for", "with", "in", "on", "of", "to", "via", "using", "and", "or", "at"}
SUFFIX_WORDS = {"tool", "impl", "mcp", "api"}

LIMIT_PARAMS = {
    "limit",
    "max_results",
    "maxresults",
    "top",
    "top_n",
    "n",
    "page_size",
    "size",
    "max_count",
    "k",
    "n_results",
    "per_page",
    "results",
    "num_results",
    "max_items",
    "rows",
    "recent",
    "limit_per_platform",
    "count",
    "max_hits",
    "max_rows",
    "max_matches",
    "maxrows",
    "maxmatches",
    "page_limit",
    "number",
}
PAGE_PARAMS = {
    "offset",
    "skip",
    "page",
    "start",
    "cursor",
    "after",
    "page_num",
    "page_number",
    "next_token",
    "start_index",
    "page_offset",
    "page_token",
    "continuation",
    "next_page_token",
}
# the time window a read covers (top posts of the week, prices over a month): no field of a record
WINDOW_PARAMS = {"time", "time_range", "timeframe", "time_frame", "time_filter", "period", "interval", "window"}
SORT_PARAMS = {
    "sort",
    "sort_by",
    "order",
    "order_by",
    "sorting",
    "sort_direction",
    "sort_field",
    "sort_order",
    "oldest_first",
    "newest_first",
}
SEARCH_PARAMS = {
    "query",
    "q",
    "search",
    "keyword",
    "keywords",
    "term",
    "search_term",
    "search_phrase",
    "search_query",
    "query_text",
    "text",
    "pattern",
    "filter",
    "search_text",
    "name_contains",
    "contains",
    "phrase",
}
OUTPUT_PARAMS = {
    "format",
    "fmt",
    "output_format",
    "detail_level",
    "verbose",
    "verbosity",
    "compact",
    "fields",
    "max_chars",
    "max_length",
    "raw",
    "pretty",
    "as_json",
    "asjson",
    "preview_only",
    "previewonly",
    "stringify",
    "deserialize",
    "use_cache",
    "timeout",
    "timeout_ms",
    "lang",
    "language_code",
    "locale",
    "response_format",
    "return_format",
    "output",
    "include",
    "max_chars_per_result",
    "passage_chars",
    "max_passages",
    "max_sections",
    "max_source_lines",
    "max_steps",
    "max_members",
    "max_depth",
    "depth",
    "comment_depth",
    "comment_limit",
    "max_allowed_characters",
    "output_options",
    "no_flags",
    "with_details",
    "detailed",
    "exact_match",
    "case_sensitive",
    "token_budget",
    "detail",
    "details",
    "summary_only",
    "outline_only",
    "names_only",
    "ids_only",
    "lemmatize",
    "preserve_tags",
    "use_proxy",
    "interactive",
    "timeout_s",
    "timeout_seconds",
    "safesearch",
    "compress",
    "truncate",
    "full_text",
    "markdown",
    "as_markdown",
    "human_readable",
    "units",
    "refresh",
    "no_cache",
    "skip_cache",
    "cache",
}
# output-shaping parameters by pattern: abstract_mode, output_format, include_*, return_*, max_chars_*
OUTPUT_PATTERN = re.compile(
    r"^(include|return|show|with|exclude|output|response|display)_|"
    r"_(mode|format|formats|verbosity|chars|characters|char_limit)$|"
    r"^max_\w*(chars|characters|length|lines|tokens|bytes|sections|section_chars|trace_length)$|"
    r"^(summary|outline|names|ids|metadata|headers|keys|count)_only$|^(use|skip|no|bypass)_cache$"
)
RANGE_PARAM = re.compile(
    r"(_gte|_lte|_gt|_lt|_from|_to|_after|_before|_since|_until|_min|_max)$|^(min|max)_|"
    r"^(before|after|since|until|start_date|end_date|date_from|date_to|from_date|to_date|start_time|end_time)$"
)
OUTPUT_PREFIX = re.compile(r"^(include|return|show|with|exclude)_")
IDEMPOTENCY = {"idempotency_key", "request_id", "client_token", "idempotencykey"}
ID_SUFFIXES = ("_id", "_key", "_name", "_code", "_uri", "_path", "_number", "_slug", "_uuid", "_symbol", "_accession")
BARE_IDS = {
    "id",
    "key",
    "name",
    "path",
    "uri",
    "symbol",
    "ticker",
    "slug",
    "doi",
    "uuid",
    "code",
    "fullname",
    "username",
    "handle",
    "accession",
    "file_path",
    "filepath",
    "file_name",
    "filename",
    "url",
    "identifier",
    "title",
}
WRITE_CONTROL = {"dry_run", "dryrun", "force", "overwrite", "confirm", "validate_only"}
RAW_PARAMS = {"sql", "query_string", "script", "command", "code", "expression", "xml", "html", "css", "jq_filter"}


@dataclass
class InferredWorld:
    world: World | None  # None when no tool binds
    bindings: dict[str, ToolBinding]  # tool_id -> binding (world_id = world.world_id)
    unbound: dict[str, str]  # tool_id -> reason ("compute_only: ...")
    servers: list[str]


# --------------------------------------------------------------------------- names


def words(name: str) -> list[str]:
    """A tool or parameter name in lower-case words: camelCase, snake_case, kebab-case."""
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    return [w for w in re.split(r"[^a-zA-Z0-9]+", name.lower()) if w]


def param_key(name: str) -> str:
    return "_".join(words(name))


def server_prefixes(tools: list[ToolSpec]) -> set[str]:
    """First words most of a server's tools share that are no verb (`bc`, `chroma`, `workspace`)."""
    if len(tools) < 2:
        firsts = [words(t.name)[:1] for t in tools]
        server = set(words(tools[0].server or "")) if tools else set()
        return {f[0] for f in firsts if f and f[0] in server and f[0] not in _ALL_VERBS}
    counts = Counter(w[0] for t in tools if (w := words(t.name)))
    server = set(words(tools[0].server or ""))
    out = set()
    for word, n in counts.items():
        if word in _ALL_VERBS:
            continue
        if n >= max(2, 0.5 * len(tools)) or word in server:
            out.add(word)
    return out


_ALL_VERBS = (
    GET_VERBS | LIST_VERBS | CREATE_VERBS | UPDATE_VERBS | DELETE_VERBS | set(FIXED_VERBS) | COMPUTE_VERBS | SIDE_VERBS
)


def _schema_type(schema: dict[str, Any]) -> str | None:
    """The JSON type of a property (a nullable anyOf reduced to its one other type), or None."""
    if not isinstance(schema, dict):
        return None
    t = schema.get("type")
    if isinstance(t, list):
        rest = [x for x in t if x != "null"]
        t = rest[0] if len(rest) == 1 else None
    if t is None:
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list):
                rest = [s for s in schema[key] if isinstance(s, dict) and s.get("type") != "null"]
                if len(rest) == 1:
                    return _schema_type(rest[0])
                return None
        if "enum" in schema and all(isinstance(v, str) for v in schema["enum"]):
            return "string"
        if "$ref" in schema or "allOf" in schema:
            return None
    return t if isinstance(t, str) else None


def _enum(schema: dict[str, Any]) -> list[str]:
    if not isinstance(schema, dict):
        return []
    values = schema.get("enum")
    if values is None:
        for key in ("anyOf", "oneOf"):
            for s in schema.get(key) or []:
                if isinstance(s, dict) and s.get("enum"):
                    values = s["enum"]
    if isinstance(values, list) and all(isinstance(v, str) for v in values if v is not None):
        kept = [v for v in values if v]  # "" and null: "no value", which the field does not hold
        return list(dict.fromkeys(kept)) if len(kept) >= 1 else []
    return []


EXAMPLE_MARK = re.compile(r"\b(?:e\.g\.|eg\.|for example|for instance|such as|example:|examples:|like)[:,]?\s*", re.I)
QUOTED = re.compile(r"""['"`]([^'"`\n]{1,40})['"`]""")
BARE_VALUE = re.compile(r"[\w./:@#+-]{2,40}")


# a later clause about what the tool gives back: its examples are of the results, not of the parameter
ABOUT_RESULTS = re.compile(r"\s*(?:the\s+)?(?:results?|returns?|outputs?|responses?)\b", re.IGNORECASE)


def _examples(schema: dict[str, Any]) -> list[str]:
    """Values a string parameter's schema documents: `examples`, a non-empty `default`, and the
    values its description gives after "e.g." / "such as" / "for example" (quoted, or one bare
    token), at most 5. Seeding draws from them, so the world holds the service's kind of data."""
    if not isinstance(schema, dict):
        return []
    found: list[str] = []
    for v in schema.get("examples") or []:
        if isinstance(v, str | int | float) and not isinstance(v, bool):
            found.append(str(v))
    if isinstance(schema.get("default"), str):
        found.append(schema["default"])
    description = str(schema.get("description") or "")
    for m in EXAMPLE_MARK.finditer(description):
        clauses = re.split(r";|\.\s", description[: m.start()])
        if len(clauses) > 1 and ABOUT_RESULTS.match(clauses[-1]):
            continue  # "name of the symbol; results include file paths (e.g., "src/main.py")": not this value's
        tail = description[m.end() : m.end() + 120].split(")")[0]
        quoted = QUOTED.findall(tail)
        if quoted:
            found.extend(quoted)
        elif (bare := BARE_VALUE.match(tail)) is not None and any(ch.isdigit() or ch in "._-/" for ch in bare[0]):
            found.append(bare[0].rstrip(".:,"))  # "e.g. 2401.12345": a value, not a word of the sentence
    kept = [v.strip() for v in found if v.strip() and len(v.split()) <= 4 and not v.strip().startswith(("{", "["))]
    return list(dict.fromkeys(kept))[:5]


# --------------------------------------------------------------------------- reading one tool


@dataclass
class ParamUse:
    param: str
    role: str  # ident | parent | value | search | limit | ignored
    field: str = ""
    type: str = "string"
    enum: list[str] = dfield(default_factory=list)
    required: bool = False
    reason: str = ""
    entity: str = ""  # ident / parent: the entity it names
    fmt: str = ""  # a seeding format the schema's bounds call for (quantity, percent)
    examples: list[str] = dfield(default_factory=list)  # values its schema documents (_examples)


@dataclass
class Reading:
    """What one tool is, before the world is sized: an action on a noun, its parameters' roles."""

    tool: ToolSpec
    action: str
    noun: str  # singular snake_case entity ("dag_run"), "" until resolved
    uses: list[ParamUse]
    fixed: dict[str, Any] = dfield(default_factory=dict)
    bare_ident: str = ""  # an identifier param with no entity of its own (symbol, path)
    attribute: str = ""  # the field a get of an attribute answers with (get_abstract -> abstract)


def _id_entity(key: str) -> str | None:
    """The entity an identifier parameter names (`paper_id` -> paper), "" for a bare one (`symbol`),
    None for a parameter that is no identifier."""
    if key in BARE_IDS:
        return ""
    for suffix in ID_SUFFIXES:
        if key.endswith(suffix) and len(key) > len(suffix):
            stem = key[: -len(suffix)]
            stem = stem.removeprefix("new_")
            return singular(stem)
    if key.endswith("id") and len(key) > 3 and key[-3] == "_":
        return singular(key[:-3])
    return None


def _verb(tokens: list[str]) -> tuple[str, int] | None:
    """(verb, its index): the first word, else the last (order_get), else any word that is a verb."""
    if not tokens:
        return None
    if tokens[0] in COMPUTE_VERBS | SIDE_VERBS and len(tokens) > 1 and tokens[-1] in ("get", "list"):
        # trace_get(run_id), trace_list(agent_name): a noun that is also a verb, then the read verb
        return tokens[-1], len(tokens) - 1
    if tokens[0] in _ALL_VERBS:
        return tokens[0], 0
    if tokens[-1] in _ALL_VERBS:
        return tokens[-1], len(tokens) - 1
    for i, t in enumerate(tokens):
        if t in _ALL_VERBS - {"new", "record", "index", "match", "order", "count", "text"}:
            return t, i
    return None


def _noun_words(tokens: list[str], at: int) -> list[str]:
    """The words naming the records: after a leading verb, before a trailing one; around a
    middle verb, those before it when the words after it only qualify (order_list_by_customer)."""
    if at == 0:
        rest = tokens[1:]
    elif at == len(tokens) - 1:
        rest = tokens[:at]
    else:
        after = [t for t in tokens[at + 1 :] if t not in QUALIFIERS and t not in SUFFIX_WORDS]
        rest = tokens[:at] if not after or after[0] in CUT_WORDS else after
    out = []
    for t in rest:
        if t in CUT_WORDS:
            break
        if t in QUALIFIERS or t in SUFFIX_WORDS:
            continue
        out.append(t)
    if len(out) > 1 and out[-1] == "list":
        out = out[:-1]
    return out


def _lookup_key(tokens: list[str]) -> list[str]:
    """The words after `by`/`from`/`for`: what a lookup is keyed by (gene_symbol)."""
    for i, t in enumerate(tokens):
        if t in ("by", "from", "for"):
            return [w for w in tokens[i + 1 :] if w not in CUT_WORDS]
    return []


CONTENT_INPUTS = {
    "text",
    "content",
    "code",
    "input",
    "data",
    "document",
    "html",
    "markdown",
    "source",
    "expression",
    "string",
    "value",
    "bytes",
    "hex",
    "payload",
    "message",
    "xml",
    "json",
    "csv",
    "brief",
    "palette",
}


def _props(tool: ToolSpec) -> tuple[dict[str, Any], set[str]]:
    schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
    props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    return props, set(schema.get("required") or [])


def _is_credential(k: str, server_words: set[str]) -> bool:
    first = k.split("_", 1)[0]
    return (
        first == "aws"
        or k in {"api_key", "access_token", "auth_token", "profile"}
        or (
            first in server_words
            and "_" in k
            and k.split("_", 1)[1]
            in {"url", "username", "password", "host", "port", "timeout", "ssl_verify", "verify_ssl", "no_auth"}
        )
    )


def _bounds(schema: dict[str, Any]) -> dict[str, Any]:
    out = {k: schema[k] for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "enum") if k in schema}
    for key in ("anyOf", "oneOf"):
        for s in schema.get(key) or []:
            if isinstance(s, dict) and s.get("type") != "null":
                out.update(_bounds(s))
    return out


def _numeric_format(schema: dict[str, Any], t: str) -> str | None:
    """ "" where the seeded numbers (1..500, 5..900) fit the schema's bounds, "quantity" (1..12) or
    "percent" (0..100) where only those fit, None where none does (a list of numbers, 0..1)."""
    b = _bounds(schema)
    if "enum" in b:
        return None
    lo = b.get("minimum", b.get("exclusiveMinimum", float("-inf")))
    hi = b.get("maximum", b.get("exclusiveMaximum", float("inf")))
    if "exclusiveMinimum" in b and not isinstance(b["exclusiveMinimum"], bool):
        lo = b["exclusiveMinimum"] + 1e-9
    if "exclusiveMaximum" in b and not isinstance(b["exclusiveMaximum"], bool):
        hi = b["exclusiveMaximum"] - 1e-9
    wide = (1, 500) if t == "integer" else (5, 900)
    if lo <= wide[0] and hi >= wide[1]:
        return ""
    if t == "integer" and lo <= 1 and hi >= 12:
        return "quantity"
    if t == "number" and lo <= 0 and hi >= 100:
        return "percent"
    return None


def read_tool(tool: ToolSpec, prefixes: set[str]) -> Reading | str:
    """A tool's reading, or the reason it cannot be bound."""
    tokens = words(tool.name)
    while tokens and tokens[0] in prefixes and len(tokens) > 1:
        tokens = tokens[1:]
    while tokens and tokens[-1] in SUFFIX_WORDS and len(tokens) > 1:
        tokens = tokens[:-1]
    props, required = _props(tool)
    keys = {p: param_key(p) for p in props}
    types = {p: _schema_type(s) for p, s in props.items()}
    if len(tokens) > 1 and tokens[-1] in NOUN_VERBS and singular(tokens[-2]) != tokens[-2] and not required:
        # topics_index(): an index of the topics, no indexing run (index_status keeps its verb)
        tokens = ["list", *tokens[:-1]]
    found = _verb(tokens)
    read_only = tool.hints.readOnlyHint is True
    if found is None:
        # a verbless read (meteor_showers, eq_detail(event_id)): only a read-only tool whose
        # required inputs are identifiers, never a function of a text it is given
        req_ok = all(_id_entity(keys[p]) is not None and types[p] in ("string", "integer") for p in required)
        if read_only and req_ok and tokens:
            verb, at = "get", -1
            tokens = ["get", *tokens]
            at = 0
        else:
            return f"ambiguous_verb: no verb in {tool.name!r}"
    else:
        verb, at = found
    if verb in COMPUTE_VERBS:
        return f"compute_only: {verb}"
    if verb in SIDE_VERBS:
        return f"side_effect_outside: {verb}"
    noun_words = _noun_words(tokens, at)
    keyed_by = _lookup_key(tokens)
    if (
        verb in GET_VERBS | LIST_VERBS
        and len(noun_words) > 1
        and noun_words[-1] == "history"
        and "_".join(noun_words[:-1]) in HISTORY_RECORDS
    ):
        # price_history(symbol), dag_run_history(dag_id): the records of each point in time, listed
        noun_words = [*noun_words[:-2], plural(noun_words[-2])]
    if any(w in DERIVED for w in noun_words):
        return f"derived_view: {'_'.join(noun_words)}"
    if any(w in SERVER_INFO for w in noun_words) and not [p for p in props if p in required]:
        return f"no_collection: server information ({'_'.join(noun_words)})"
    content = [p for p in required if keys[p] in CONTENT_INPUTS and verb not in CREATE_VERBS | UPDATE_VERBS]
    if content:
        return f"compute_only: a function of the {content[0]} it is given"
    if verb in GET_VERBS:
        action = "get"
    elif verb in LIST_VERBS:
        action = "list"
    elif verb in CREATE_VERBS:
        action = "create"
    elif verb in DELETE_VERBS:
        action = "delete"
    else:
        action = "update"
    fixed: dict[str, Any] = {}
    if verb in FIXED_VERBS:
        fname, value = FIXED_VERBS[verb]
        fixed[fname] = value
    # identifiers first: they decide the noun and whether a get is a list
    ident_entity: dict[str, str] = {}
    for p in props:
        k = keys[p]
        e = _id_entity(k)
        new_value = action == "update" and k.startswith("new_")
        if (
            e is not None
            and types[p] in ("string", "integer")
            and k not in LIMIT_PARAMS | PAGE_PARAMS
            and not new_value
        ):
            ident_entity[p] = e
    named = {e for e in ident_entity.values() if e}
    entity = singular("_".join(noun_words)) if noun_words else ""
    head = noun_words[-1] if noun_words else ""
    value_fields = {keys[p] for p in props if p not in ident_entity}
    if noun_words and (head in ATTRIBUTES or (len(noun_words) > 1 and head in value_fields)):
        stem = noun_words[:-1]
        # get_abstract(paper_id) -> paper; get_stock_price(symbol) -> stock; ensembl_id from gene_symbol -> gene
        key_entity = _id_entity("_".join(keyed_by)) if keyed_by else None
        if keyed_by and (key_entity or not stem):
            entity = key_entity or singular("_".join(keyed_by))
        elif stem:  # get_stock_price_by_date(symbol, date): a stock's price, not a date
            entity = singular("_".join(stem))
        elif len(named) == 1:
            entity = next(iter(named))
        else:
            entity = ""
    elif not noun_words and len(named) == 1:
        entity = next(iter(named))
    is_plural = bool(noun_words) and head not in ATTRIBUTES and singular(head) != head
    if entity and entity not in named and not is_plural:
        # get_paper_latex_section(paper_id, section_id) -> section; get_paper_latex(paper_id) -> paper
        suffix = [e for e in named if entity.endswith("_" + e)]
        prefix = [e for e in named if entity.startswith(e + "_")]
        if suffix:
            entity = max(suffix, key=len)
        elif len(prefix) == 1 and action in ("get", "update") and len(named) == 1:
            entity = prefix[0]
    search_like = [p for p in props if keys[p] in SEARCH_PARAMS and types[p] == "string"]
    if action == "get" and (is_plural or (entity not in named and search_like)):
        action = "list"
    if (
        (
            action == "get"
            and entity not in named
            and not [p for p in required if p not in ident_entity or ident_entity[p] == ""]
        )
        and not any(ident_entity[p] == "" for p in ident_entity)
        and not [p for p in props if p in required]
    ):
        action = "list"
    server_words = set(words(tool.server or ""))
    uses: list[ParamUse] = []
    own_done = False
    for p, s in props.items():
        k, t, req = keys[p], types[p], p in required
        if k in IDEMPOTENCY:
            uses.append(
                ParamUse(p, "ignored", reason="an idempotency token: a retry has the same effect", required=req)
            )
            continue
        if k in WRITE_CONTROL and action in ("create", "update", "delete"):
            return f"unsupported_param: {p} (a write that may not write)"
        if k in RAW_PARAMS and req:
            return f"side_effect_outside: runs the {p} it is given"
        if _is_credential(k, server_words) and t in ("string", "boolean", "integer", None):
            uses.append(ParamUse(p, "ignored", reason="connection settings, not the records", required=req))
            continue
        if t in ("array", "object") or t is None:
            if req:
                return f"unsupported_schema: {p} is {t or 'a composite'}"
            uses.append(ParamUse(p, "ignored", reason=f"an optional {t or 'composite'} option, not modelled"))
            continue
        reading = action in ("get", "list")
        if k in PAGE_PARAMS and t in ("integer", "string", "number") and reading:
            uses.append(ParamUse(p, "ignored", reason="pagination", required=req))
            continue
        if k in WINDOW_PARAMS and reading and t == "string":
            uses.append(ParamUse(p, "ignored", reason="a time window of the results, not modelled", required=req))
            continue
        if k in SORT_PARAMS:
            uses.append(ParamUse(p, "ignored", reason="the order of the results", required=req))
            continue
        if (
            k in OUTPUT_PARAMS
            or (OUTPUT_PREFIX.match(k) and t == "boolean")
            or (OUTPUT_PATTERN.search(k) and (reading or t == "boolean") and not k.endswith(ID_SUFFIXES))
        ):
            uses.append(ParamUse(p, "ignored", reason="the shape of the output", required=req))
            continue
        if k in LIMIT_PARAMS and t == "integer" and reading:
            if action == "list":
                uses.append(ParamUse(p, "limit", required=req, type=t))
            else:
                uses.append(ParamUse(p, "ignored", reason="how much of the record comes back", required=req))
            continue
        if RANGE_PARAM.search(k) and k not in LIMIT_PARAMS:
            if req or not reading:
                return f"unsupported_param: {p} (a range filter)"
            uses.append(ParamUse(p, "ignored", reason="an optional range filter, not modelled"))
            continue
        if action == "list" and t == "string" and (k in SEARCH_PARAMS or k.endswith("_pattern")):
            uses.append(ParamUse(p, "search", required=req))
            continue
        if k.endswith("_ids") and t == "string":
            if req:
                return f"unsupported_param: {p} (several identifiers in one string)"
            uses.append(ParamUse(p, "ignored", reason="an optional multi-value filter, not modelled"))
            continue
        if k in SEARCH_PARAMS and t == "string" and action != "create" and k not in ("text", "term", "name"):
            return f"unsupported_param: {p} (a text query outside a list)"
        if k in RAW_PARAMS:
            return f"side_effect_outside: runs the {p} it is given"
        fmt = ""
        if t in ("integer", "number"):
            fmt = _numeric_format(s, t)
            if fmt is None:
                if req or action in ("create", "update"):
                    return f"unsupported_schema: {p} is a number in a range or list seeding cannot hold"
                uses.append(ParamUse(p, "ignored", reason="an optional bounded number, not modelled"))
                continue
        field_name = k
        if t == "boolean" and k.startswith("is_") and len(k) > 3:
            field_name = k[3:]
        if action == "update" and k.startswith("new_") and len(k) > 4:
            field_name = k[4:]
        use = ParamUse(
            p,
            "value",
            field=field_name,
            type=t or "string",
            enum=_enum(s),
            required=req,
            fmt=fmt,
            examples=_examples(s) if t == "string" else [],
        )
        if p in ident_entity:
            e = ident_entity[p]
            if entity and e == entity and not own_done:
                use.role, use.entity, own_done = "own", entity, True
            elif e and e != entity:
                use.role, use.entity = "parent", e
        uses.append(use)
    own = next((u for u in uses if u.role == "own"), None)
    if own is None and action in ("get", "update", "delete"):
        bare = [u for u in uses if u.param in ident_entity and ident_entity[u.param] == "" and u.required]
        if len(bare) == 1:
            own = bare[0]
            own.role, own.entity = "own", entity
    if action == "list" and own is not None:
        own.role = "value"
    if not entity:
        if own is not None:
            return "no_collection: an identifier with no noun"
        return f"no_collection: {tool.name!r} names no records"
    names_none = not [u for u in uses if u.role == "parent" or (u.role == "value" and u.required)]
    if action in ("get", "update", "delete") and own is None and names_none:
        return f"no_collection: a {action} that names no record"
    if action in ("update", "delete") and is_plural and own is None:
        return f"bulk_write: {action}s every matching {entity.replace('_', ' ')}"
    if action == "update" and not fixed and not [u for u in uses if u.role == "value"]:
        return "no_change: an update with no value to set"
    if action == "create" and not [u for u in uses if u.role in ("value", "own", "parent")]:
        return "no_change: a create with no value"
    # an attribute a get names (get_abstract, get_current_stock_price): a field of the record it answers with
    attribute = ""
    if action == "get" and noun_words and noun_words[-1] in ATTRIBUTE_FIELDS and entity != noun_words[-1]:
        attribute = ATTRIBUTE_FIELDS[noun_words[-1]]
    return Reading(tool, action, entity, uses, fixed, attribute=attribute)


# --------------------------------------------------------------------------- fields


def field_format(name: str, ftype: str) -> str:
    """A seeding format for a field, from its name and JSON type (`authors` as `author`)."""
    w = set(name.split("_"))
    w |= {singular(x) for x in w if len(x) > 3 and x.endswith("s") and not x.endswith("ss")}
    if ftype == "boolean":
        return "text"
    if ftype in ("integer", "number"):
        if w & {"amount", "price", "cost", "balance", "total", "fee", "salary", "revenue", "budget"}:
            return "money"
        if w & {"percent", "percentage", "rate", "ratio", "confidence", "score"} and ftype == "number":
            return "percent"
        if w & {"quantity", "qty", "count", "slots", "copies", "stock"}:
            return "quantity"
        return "text"
    if "email" in w:
        return "email"
    if w & {"phone", "mobile", "tel"}:
        return "phone"
    if w & {"url", "uri", "link", "homepage", "website"}:
        return "url"
    if w & {"date", "day", "birthday"}:
        return "date"
    if w & {"datetime", "timestamp", "at", "when", "time"}:
        return "datetime"
    if w & {"city", "town"}:
        return "city"
    if w & {"country", "nation"}:
        return "country"
    if "address" in w:
        return "address"
    if w & {"company", "organization", "organisation", "sponsor", "publisher", "vendor"}:
        return "company"
    if w & {"author", "owner", "assignee", "agent", "reviewer", "user", "username", "person", "contact", "creator"}:
        return "person_name"
    if w & {
        "title",
        "subject",
        "reason",
        "description",
        "note",
        "comment",
        "message",
        "summary",
        "content",
        "text",
        "body",
        "rationale",
        "problem",
        "topic",
        "question",
        "abstract",
        "line",
        "overview",
        "outline",
        "definition",
    }:
        return "sentence"
    if w & {"id", "key", "code", "symbol", "ticker", "number", "doi", "uuid", "accession", "ref", "sha", "hash"}:
        return "code"
    if w & {"name", "label", "tag", "category", "type", "kind", "slug", "path", "file", "area", "folder"}:
        return "label"
    return "text"


# --------------------------------------------------------------------------- a world from readings


@dataclass
class _Coll:
    entity: str
    readings: list[Reading]
    fields: dict[str, FieldSpec] = dfield(default_factory=dict)
    key: str = ""
    natural: str | None = None  # the identifier field, when the identifier is a field (not the key)
    uses: Counter = dfield(default_factory=Counter)
    naming: set[str] = dfield(default_factory=set)  # fields a get names its record by (owner, repo)
    mentions: Counter = dfield(default_factory=Counter)  # returned fields: how many tools return them
    needed: set[str] = dfield(default_factory=set)  # fields a binding cannot do without


def _plan_collection(entity: str, readings: list[Reading]) -> _Coll:
    c = _Coll(entity, readings)
    own_names = Counter(param_key(u.param) for r in readings for u in r.uses if u.role == "own")
    created = {param_key(u.param) for r in readings if r.action == "create" for u in r.uses if u.role == "own"}
    types = {param_key(u.param): u.type for r in readings for u in r.uses if u.role == "own"}
    ident = min(own_names, key=lambda n: (-own_names[n], n)) if own_names else None
    if (
        ident is not None
        and types.get(ident) == "string"
        and (ident.endswith("_id") or ident == "id" or ident.endswith("_uuid"))
        and ident not in created
    ):
        c.key = ident
    else:
        c.key = f"{entity}_id" if ident != f"{entity}_id" else f"{entity}_key"
        c.natural = ident
    # fields: every value, own (natural) and parent parameter, typed by the most common schema type
    by_field: dict[str, list[ParamUse]] = defaultdict(list)
    for r in readings:
        for u in r.uses:
            if u.role == "own":
                if c.natural is not None:
                    by_field[c.natural].append(u)
            elif u.role in ("parent", "value") and u.field != c.key:
                by_field[u.field].append(u)
        for fname, value in r.fixed.items():
            by_field[fname].append(
                ParamUse("", "value", fname, "boolean" if isinstance(value, bool) else "string", [], False)
            )
    for fname, us in by_field.items():
        c.uses[fname] = len(us)
        writes = any(r.action in ("create", "update", "delete") for r in readings for u in us if u in r.uses)
        if any(u.required or not u.param for u in us) or writes or fname == c.natural:
            c.needed.add(fname)
    c.naming = {
        u.field if u.role != "own" else (c.natural or c.key)
        for r in readings
        if r.action in ("get", "delete")
        for u in r.uses
        if u.required and u.role in ("own", "parent", "value")
    }
    for fname, us in by_field.items():
        t = Counter(u.type for u in us).most_common(1)[0][0]
        enum: list[str] = []
        for u in sorted(us, key=lambda u: u.param):
            if u.type == t:
                enum.extend(v for v in u.enum if v not in enum)
        fixed_values = [r.fixed[fname] for r in readings if fname in r.fixed and isinstance(r.fixed[fname], str)]
        if fixed_values:
            if not enum:
                enum = ["active"] if "active" not in fixed_values else ["open"]
            enum.extend(v for v in fixed_values if v not in enum)
        ref = None
        fmt = "code" if fname == c.natural and t == "string" and fname.endswith("_id") else field_format(fname, t)
        bounded = sorted({u.fmt for u in us if u.fmt})
        if bounded:
            fmt = "quantity" if "quantity" in bounded else bounded[0]
        elif fmt in ("money", "percent", "quantity") and t in ("integer", "number"):
            fmt = fmt if (fmt != "quantity" or t == "integer") and (fmt == "quantity" or t == "number") else "text"
        examples = list(dict.fromkeys(v for u in sorted(us, key=lambda u: u.param) for v in u.examples))
        c.fields[fname] = FieldSpec(
            name=fname,
            type=t if t in ("string", "integer", "number", "boolean") else "string",
            format="text" if enum else fmt,
            enum=enum if t == "string" else [],
            ref=ref,
            unique=fname == c.natural and t == "string",
            required=any(u.required for u in us),
            examples=[] if enum or t != "string" else examples[:5],
        )
    # what the tools return: their output schemas' record properties and the fields their
    # descriptions list, counted by the tools that mention them (the record's own identifier aside)
    returned: dict[str, dict[str, Any]] = {}
    for r in readings:
        answers = {r.attribute: {"type": "number" if r.attribute == "price" else "string"}} if r.attribute else {}
        for fname, spec in {**answers, **_returned_fields(r.tool)}.items():
            if fname in ("id", "key", c.key, f"{entity}_id", f"{entity}_key"):
                continue
            if fname in c.fields:
                if c.fields[fname].type == spec["type"] or spec.get("described"):
                    c.uses[fname] += 1
                continue
            returned.setdefault(fname, spec)
            c.mentions[fname] += 1
    for fname, spec in returned.items():
        t = spec["type"]
        c.fields[fname] = FieldSpec(
            name=fname,
            type=t,
            format="text" if spec.get("enum") else field_format(fname, t),
            enum=spec.get("enum", []) if t == "string" else [],
            required=False,
        )
    for fname, fmt in (("name", "label"), ("description", "sentence")):
        if len(c.fields) >= MIN_FIELDS:
            break
        if fname not in c.fields and fname != c.key:
            c.fields[fname] = FieldSpec(name=fname, format=fmt)
    if not any(f.type == "string" and not f.enum for f in c.fields.values()) and any(
        u.role == "search" for r in readings for u in r.uses
    ):
        c.fields["description"] = FieldSpec(name="description", format="sentence")
    return c


# envelope properties of a result, not fields of the records in it
ENVELOPE = {
    "result",
    "results",
    "count",
    "total",
    "error",
    "errors",
    "success",
    "ok",
    "message",
    "has_more",
    "next_start",
    "next_cursor",
    "next_page",
    "next_token",
    "cursor",
    "returned",
    "total_results",
    "total_count",
    "truncated",
    "is_truncated",
    "page",
    "page_size",
    "offset",
    "limit",
    "pagination",
    "hint",
    "note",
    "warning",
    "warnings",
    "query",
    "found",
}
# words a description's list names that are no field (metadata, "error message")
VAGUE = {
    "metadata",
    "details",
    "detail",
    "information",
    "info",
    "data",
    "more",
    "other",
    "others",
    "results",
    "result",
    "list",
    "lists",
    "array",
    "error",
    "errors",
    "message",
    "messages",
    "etc",
    "everything",
    "fields",
    "field",
    "options",
    "content",
    "json",
    "dict",
    "object",
    "objects",
    "response",
    "summary",
    "pagination",
    "things",
}
_MAX_FIELD_WORDS = 3


def _resolve(schema: Any, defs: dict[str, Any], depth: int = 0) -> Any:
    """A schema with its local `$ref` (#/$defs/X, #/definitions/X) replaced by the definition."""
    if not isinstance(schema, dict) or depth > 4:
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target = defs.get(ref.rsplit("/", 1)[-1])
        return _resolve(target, defs, depth + 1) if isinstance(target, dict) else {}
    return schema


def _scalar(name: str, s: Any, defs: dict[str, Any]) -> dict[str, Any] | None:
    s = _resolve(s, defs)
    t = _schema_type(s) if isinstance(s, dict) else None
    if t not in ("string", "integer", "number", "boolean"):
        return None
    enum = _enum(s)
    return {"type": t, **({"enum": enum} if enum else {})}


def _record_props(schema: Any, defs: dict[str, Any], depth: int = 0) -> dict[str, Any] | None:
    """The properties of the record(s) an output schema describes: an object's, an array's items',
    the one `result`/`items`-like array of objects an envelope holds, or None."""
    schema = _resolve(schema, defs)
    if not isinstance(schema, dict) or depth > 3:
        return None
    for key in ("anyOf", "oneOf"):
        options = [o for o in schema.get(key) or [] if isinstance(o, dict) and o.get("type") != "null"]
        for o in options:
            found = _record_props(o, defs, depth + 1)
            if found:
                return found
    if _schema_type(schema) == "array" or "items" in schema:
        return _record_props(schema.get("items"), defs, depth + 1)
    props = schema.get("properties")
    if not isinstance(props, dict) or not props:
        return None
    # an envelope: {result: [...]} or {papers: [...], total: 3}: the records are the array's items
    nested = [
        (n, _record_props(v, defs, depth + 1))
        for n, v in props.items()
        if isinstance(v, dict) and _schema_type(_resolve(v, defs)) in ("array", "object", None)
    ]
    nested = [(n, p) for n, p in nested if p]
    scalars = {n: v for n, v in props.items() if _scalar(n, v, defs) and param_key(n) not in ENVELOPE}
    if len(nested) == 1 and (nested[0][0] in ("result", "results", "items", "data") or len(scalars) <= 1):
        return nested[0][1]
    return props


def _out_fields(tool: ToolSpec) -> dict[str, dict[str, Any]]:
    """Scalar properties of the records a tool's output schema describes (`$ref`s resolved), typed."""
    schema = tool.output_schema
    if not isinstance(schema, dict):
        return {}
    defs = {**(schema.get("definitions") or {}), **(schema.get("$defs") or {})}
    props = _record_props(schema, defs) or {}
    out: dict[str, dict[str, Any]] = {}
    for name, s in props.items():
        k = param_key(name)
        spec = _scalar(name, s, defs)
        if spec is not None and k not in ENVELOPE:
            out.setdefault(k, spec)
    return {k: v for k, v in out.items() if re.match(r"^[a-z][a-z0-9_]{0,39}$", k)}


# "Returns title, authors, abstract, and PDF URL." / "including: - name: ..." / "with its pages and ids"
_LIST_INTRO = re.compile(
    r"\b(?:returns?|returning|including|includes|include|containing|contains|with (?:its|their|the)|each with|"
    r"listing|lists|shows?|gives?|provides?)\b:?\s+",
    re.I,
)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*[`*_]*([A-Za-z][A-Za-z0-9_]*)[`*_]*\s*(?:\([^)]*\))?\s*:\s")
_SECTION = re.compile(
    r"^\s*(?:args|arguments|parameters|params|example|examples|usage|note|notes|raises|see also)\b", re.I
)


def _field_name(phrase: str) -> str | None:
    """A described item as a field name (`PDF URL` -> pdf_url, `published date` -> published_date), or None."""
    phrase = re.sub(r"\([^)]*\)", " ", phrase)
    phrase = re.sub(r"\b([A-Z]{2,})s\b", lambda m: m.group(1).lower() + "s", phrase)  # IDs, URLs
    phrase = re.sub(
        r"^\s*(?:and|or|also|the|its|their|a|an|each|any|all|optional(?:ly)?)\s+", "", phrase.strip(), flags=re.I
    )
    phrase = re.sub(r"^\s*(?:and|or|the|its|their|a|an)\s+", "", phrase, flags=re.I).strip(" .`*'\"")
    if not phrase or not re.fullmatch(r"[A-Za-z][A-Za-z0-9_ /-]*", phrase) or "/" in phrase:
        return None
    ws = words(phrase) if " " not in phrase else [w for p in phrase.split() for w in words(p)]
    if not ws or len(ws) > _MAX_FIELD_WORDS or ws[-1] in VAGUE or ws[0] in VAGUE or any(w in CUT_WORDS for w in ws):
        return None
    if ws[0] in ("number", "num") and len(ws) > 1:  # number of terms -> term_count (cut by "of" above)
        return None
    name = "_".join(ws)
    return name if re.fullmatch(r"[a-z][a-z0-9_]{0,39}", name) else None


def _described_fields(description: str) -> list[str]:
    """Fields a tool's description says it returns: a `- name: ...` list after "Returns ... including:",
    or an inline list of two or more items after "Returns"/"including"/"with its" ("Returns title,
    authors, abstract, categories, published date, and PDF URL")."""
    out: list[str] = []
    lines = description.splitlines()
    listing = False
    for line in lines:
        if _SECTION.match(line):
            listing = False
            continue
        if _LIST_INTRO.search(line) and line.rstrip().endswith(":"):
            listing = True
            continue
        m = _BULLET.match(line)
        if listing and m:
            name = param_key(m.group(1))
            if re.fullmatch(r"[a-z][a-z0-9_]{0,39}", name) and name not in out:
                out.append(name)
        elif listing and line.strip() and not line.startswith((" ", "\t")) and not m:
            listing = False
    flat = " ".join(line.strip() for line in lines if not _BULLET.match(line))
    for m in _LIST_INTRO.finditer(flat):
        span = re.split(
            r"[.;:!?\n]|\s(?:or error|for |from |so |to |that |which |when |if |in |by |—|--)",
            flat[m.end() :],
            maxsplit=1,
        )[0]
        if "," not in span:
            continue
        items = [x for part in span.split(",") for x in re.split(r"\s+and\s+|\s+or\s+", part)]
        names = [n for n in (_field_name(x) for x in items) if n]
        if len(names) >= 2 and len(names) >= len([x for x in items if x.strip()]) / 2:
            out.extend(n for n in names if n not in out)
    return out


def _field_type(name: str) -> str:
    """A described field's JSON type from its name: counts are integers, is_/has_ flags booleans."""
    w = name.split("_")
    if w[0] in ("is", "has", "can") and len(w) > 1:
        return "boolean"
    if w[-1] in ("count", "slots", "retries", "tries", "port", "year", "rank") or w[0] in ("num", "n"):
        return "integer"
    return "string"


def _returned_fields(tool: ToolSpec) -> dict[str, dict[str, Any]]:
    """What a tool says its records hold: its output schema's record properties (typed), then the
    fields its description lists (typed by name)."""
    out: dict[str, dict[str, Any]] = {}
    described = [(n, {"type": _field_type(n), "described": True}) for n in _described_fields(tool.description or "")]
    for name, spec in [*_out_fields(tool).items(), *described]:
        if (
            len(name) < 2
            or name in ENVELOPE
            or name in NOT_FIELDS
            or name.startswith(("total_", "top_", "next_", "suggested_"))
            or name.endswith(("_searched", "_breakdowns"))
        ):
            continue  # a figure about the answer, not a field of its records
        # a flag `is_paused` is the field `paused` (as a parameter's is); `published` is a date
        if spec["type"] == "boolean" and name.startswith("is_") and len(name) > 3:
            name = name[3:]
        if name in PARTICIPLES and spec["type"] == "string":
            name = f"{name}_date"
        out.setdefault(name, spec)
    return out


# words a description lists that name no field: JSON types, questions, identifiers in general
NOT_FIELDS = {"boolean", "integer", "string", "number", "float", "how", "what", "why", "when", "where", "which", "ids"}
PARTICIPLES = {"published", "created", "updated", "modified", "released", "submitted", "posted"}


def _bind(r: Reading, c: _Coll, coll: CollectionSpec, world_id: str) -> ToolBinding | str:
    fields = {f.name for f in coll.fields}
    b: dict[str, Any] = {
        "world_id": world_id,
        "collection": coll.name,
        "action": r.action,
        "params": {},
        "match": {},
        "search": [],
        "ignored": {},
        "fixed": {},
    }
    # the record's own identifier first: whether the tool has a key parameter decides the rest
    for u in sorted(r.uses, key=lambda u: u.role != "own"):
        if u.role == "ignored":
            b["ignored"][u.param] = u.reason
        elif u.role == "search":
            b["search"].append(u.param)
        elif u.role == "limit":
            b["limit_param"] = u.param
        elif u.role == "own":
            if c.natural is None:
                if r.action == "create":
                    return "unsupported_param: a create that names its key"
                b["key_param"] = u.param
            elif r.action in ("create", "update"):
                if c.natural not in fields:
                    return f"too_many_fields: {u.param}"
                (b["params"] if r.action == "create" else b["match"])[u.param] = c.natural
            elif r.action == "list":
                b["params"][u.param] = c.natural
            else:
                b["match"][u.param] = c.natural
        else:  # parent, value
            fname = u.field
            if fname == c.key:
                if r.action in ("get", "update", "delete") and "key_param" not in b:
                    b["key_param"] = u.param
                    continue
                if r.action == "list":  # a filter on the key itself (search_paper_text(paper_id, query))
                    b["params"][u.param] = fname
                    continue
                return f"unsupported_param: {u.param} repeats the key"
            if fname not in fields:
                if r.action in ("get", "list") and not u.required:
                    b["ignored"][u.param] = "an optional filter, not modelled"
                    continue
                return f"too_many_fields: {u.param}"
            spec = next(f for f in coll.fields if f.name == fname)
            if spec.type != u.type:
                return f"type_conflict: {u.param} is {u.type}, the field {spec.type}"
            if u.enum and set(u.enum) - set(spec.enum):
                return f"type_conflict: {u.param}'s values are not the field's"
            if r.action in ("list", "create"):
                b["params"][u.param] = fname
            elif r.action == "update":
                if u.role == "parent" or (u.required and fname in c.naming):
                    b["match"][u.param] = fname
                else:
                    b["params"][u.param] = fname
            elif r.action == "get" and not u.required and "key_param" not in b and u.type == "boolean":
                b["ignored"][u.param] = "an optional output switch of a lookup"
            else:
                b["match"][u.param] = fname
    for fname, value in r.fixed.items():
        if fname not in fields:
            return f"too_many_fields: {fname}"
        b["fixed"][fname] = value
    if r.action in ("get", "update", "delete") and not b.get("key_param") and not b["match"]:
        return f"no_collection: a {r.action} that names no record"
    if r.action == "get" and not b.get("key_param"):
        required_match = [p for p in b["match"] if p in set(r.tool.input_schema.get("required") or [])]
        if not required_match:
            return "no_collection: a get that names no record"
    if r.action == "update" and not b["params"] and not b["fixed"]:
        return "no_change: an update with no value to set"
    return ToolBinding(**b)


# --------------------------------------------------------------------------- servers to worlds


@dataclass
class _Plan:
    servers: list[str]
    readings: list[Reading]
    unbound: dict[str, str]
    tools: list[ToolSpec]


def _read_server(tools: list[ToolSpec]) -> _Plan:
    prefixes = server_prefixes(tools)
    readings, unbound = [], {}
    for t in tools:
        r = read_tool(t, prefixes)
        if isinstance(r, str):
            unbound[t.tool_id] = r
        else:
            readings.append(r)
    # bare identifiers (symbol, path) of a noun-less attribute read: the server's collection keyed by them
    return _Plan([tools[0].server or "unknown"], readings, unbound, tools)


def _merge_entities(readings: list[Reading]) -> None:
    """One collection per resource. `dag_run` and `dag_runs` already agree (singular); a noun
    led by a parent it is filtered by joins the collection the rest names, where the server has
    it (`subreddit_posts(subreddit_name)` -> posts); a compound noun ending in another
    collection's entity joins it where both take the same identifier parameter."""
    entities = Counter(r.noun for r in readings)
    for r in readings:
        parts = r.noun.split("_")
        parents = {u.entity for u in r.uses if u.role == "parent"}
        if len(parts) > 1 and parts[0] in parents and "_".join(parts[1:]) in entities:
            r.noun = "_".join(parts[1:])
    entities = Counter(r.noun for r in readings)
    for r in readings:
        if entities[r.noun] > 1:
            continue
        own = [param_key(u.param) for u in r.uses if u.role == "own"]
        for other in sorted(entities):
            if other == r.noun or not r.noun.endswith("_" + other):
                continue
            others_own = {param_key(u.param) for r2 in readings if r2.noun == other for u in r2.uses if u.role == "own"}
            if own and set(own) & others_own:
                r.noun = other
                break


def _world_name(servers: list[str]) -> str:
    return " + ".join(s.replace("-", " ").replace("_", " ") for s in servers)


def _first_sentence(text: str, n: int = 90) -> str:
    s = re.split(r"(?<=[.!?])\s|\n", text.strip(), maxsplit=1)[0].strip()
    return s if len(s) <= n else s[: n - 1].rsplit(" ", 1)[0] + "…"


def _build(
    servers: list[str], readings: list[Reading], tools: list[ToolSpec], today: str, part: int | None
) -> tuple[World | None, dict[str, ToolBinding], dict[str, str]]:
    unbound: dict[str, str] = {}
    by_entity: dict[str, list[Reading]] = defaultdict(list)
    for r in readings:
        by_entity[r.noun].append(r)
    order = sorted(by_entity, key=lambda e: (-len(by_entity[e]), e))
    keep, dropped = order[:MAX_COLLECTIONS], order[MAX_COLLECTIONS:]
    for e in dropped:
        for r in by_entity[e]:
            unbound[r.tool.tool_id] = f"too_many_collections: {plural(e)}"
    scope = "+".join(servers) + (f"#{part}" if part is not None else "")
    world_id = content_id("crawled", scope, prefix="wld_")
    plans: dict[str, _Coll] = {}
    for e in keep:
        plans[e] = _plan_collection(e, by_entity[e])
    # references: a parent identifier that is another kept collection's key
    keys = {c.key: plural(e) for e, c in plans.items() if c.natural is None}
    collections: list[CollectionSpec] = []
    taken: set[str] = set()
    for e in keep:
        c = plans[e]
        # the identifier, the fields a binding needs and references first; then the fields most
        # tools mention (a parameter or a returned field), a returned field before an option
        ranked = sorted(
            c.fields.values(),
            key=lambda f: (
                f.name != c.natural,
                f.name not in c.needed,
                f.name not in keys,
                -(c.uses.get(f.name, 0) + c.mentions.get(f.name, 0)),
                f.name not in c.mentions,
                f.name,
            ),
        )[:MAX_FIELDS]
        creates = [r for r in by_entity[e] if r.action == "create"]
        supplied = (
            set.intersection(
                *({u.field for u in r.uses if u.required and u.role in ("parent", "value")} for r in creates)
            )
            if creates
            else None
        )
        fields = []
        for f in ranked:
            if (
                f.name in keys
                and keys[f.name] != plural(e)
                and f.type == "string"
                and not f.enum
                and (supplied is None or f.name in supplied)
            ):
                f = f.model_copy(update={"ref": keys[f.name], "format": "code", "unique": False})
            fields.append(f)
        prefix = id_prefix(e, taken)
        taken.add(prefix)
        collections.append(
            CollectionSpec(name=plural(e), entity=e.replace("_", " "), key=c.key, id_prefix=prefix, fields=fields)
        )
    # a reference cycle (a -> b -> a): drop the references of the later collection
    world = _world(servers, collections, tools, readings, today, world_id)
    problem = world_problem(world)
    if problem and "cycle" in problem:
        collections = [
            c.model_copy(update={"fields": [f.model_copy(update={"ref": None}) for f in c.fields]}) for c in collections
        ]
        world = _world(servers, collections, tools, readings, today, world_id)
        problem = world_problem(world)
    if problem:
        for r in readings:
            unbound.setdefault(r.tool.tool_id, f"invalid_world: {problem}")
        return None, {}, unbound
    bindings: dict[str, ToolBinding] = {}
    for e in keep:
        coll = world.collection(plural(e))
        assert coll is not None
        for r in by_entity[e]:
            b = _bind(r, plans[e], coll, world_id)
            if isinstance(b, str):
                unbound[r.tool.tool_id] = b
            else:
                bindings[r.tool.tool_id] = b
    if not bindings:
        return None, {}, unbound
    # collections no bound tool acts on are dropped (a world holds what its tools reach)
    used = {b.collection for b in bindings.values()}
    refs = {f.ref for c in world.collections if c.name in used for f in c.fields if f.ref}
    if any(c.name not in used | refs for c in world.collections):
        world = world.model_copy(update={"collections": [c for c in world.collections if c.name in used | refs]})
    bound_readings = [r for r in readings if r.tool.tool_id in bindings]
    world = _world(servers, world.collections, tools, bound_readings, today, world_id)
    return world, bindings, unbound


def _world(
    servers: list[str],
    collections: list[CollectionSpec],
    tools: list[ToolSpec],
    readings: list[Reading],
    today: str,
    world_id: str,
) -> World:
    categories = Counter(t.category for t in tools if t.category)
    category = min(categories, key=lambda c: (-categories[c], c)) if categories else "general"
    names = ", ".join(c.name.replace("_", " ") for c in collections)
    said = [_first_sentence(r.tool.description) for r in readings[:3] if r.tool.description.strip()]
    description = f"The {names} of the {_world_name(servers)} MCP server{'s' if len(servers) > 1 else ''}."
    if said:
        description += " Its tools: " + " ".join(s if s.endswith((".", "…")) else s + "." for s in said)
    policy = (
        f"Work only on the {names} the tools return, and look a record up before changing it. "
        "Ask the user to confirm before deleting a record or changing one they did not name."
    )
    world = World(
        world_id=world_id,
        domain_id=content_id("crawled", servers, prefix="dom_"),
        domain=_world_name(servers),
        category=category,
        description=description,
        collections=collections,
        today=today,
        source="crawled",
        servers=list(servers),
        policy=policy,
    )
    return world.model_copy(update={"rules": derive_rules(world)})


def _split(readings: list[Reading]) -> list[list[Reading]]:
    """A server's readings in groups of at most MAX_COLLECTIONS collections: communities of its
    collection graph (a parent identifier or a shared field joins two collections)."""
    by_entity: dict[str, list[Reading]] = defaultdict(list)
    for r in readings:
        by_entity[r.noun].append(r)
    if len(by_entity) <= MAX_COLLECTIONS:
        return [readings]
    g = nx.Graph()
    for e in sorted(by_entity):
        g.add_node(e)
    fields = {
        e: {param_key(u.param) for r in rs for u in r.uses if u.role in ("own", "parent", "value")}
        for e, rs in by_entity.items()
    }
    for e, rs in sorted(by_entity.items()):
        for u in (u for r in rs for u in r.uses if u.role == "parent"):
            if u.entity in by_entity and u.entity != e:
                w = g.get_edge_data(e, u.entity, {"weight": 0})["weight"]
                g.add_edge(e, u.entity, weight=w + 2)
    names = sorted(by_entity)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            shared = fields[a] & fields[b]
            if shared:
                w = g.get_edge_data(a, b, {"weight": 0})["weight"]
                g.add_edge(a, b, weight=w + len(shared) / 2)
    communities = nx.community.louvain_communities(g, weight="weight", seed=7, resolution=1.0)
    size = {e: len(by_entity[e]) for e in by_entity}
    groups: list[list[str]] = []
    for comm in sorted(communities, key=lambda s: (-sum(size[e] for e in s), sorted(s))):
        members = sorted(comm, key=lambda e: (-size[e], e))
        while members:
            chunk, members = members[:MAX_COLLECTIONS], members[MAX_COLLECTIONS:]
            groups.append(chunk)
    # small groups (one collection of one tool) are packed together where they fit
    packed: list[list[str]] = []
    for grp in groups:
        target = next((p for p in packed if len(p) + len(grp) <= MAX_COLLECTIONS and len(grp) == 1), None)
        if target is not None and sum(size[e] for e in grp) <= 1:
            target.extend(grp)
        else:
            packed.append(list(grp))
    return [[r for e in grp for r in by_entity[e]] for grp in packed]


def _clusters(plans: list[_Plan]) -> list[list[int]]:
    """Servers of one category whose collections overlap (the same entity with the same
    identifier), grouped by networkx Louvain communities; a group is kept only where the
    merged server still fits one world."""
    sig: list[dict[str, set[str]]] = []
    for p in plans:
        ents: dict[str, set[str]] = defaultdict(set)
        for r in p.readings:
            ents[r.noun].update(param_key(u.param) for u in r.uses if u.role == "own")
        sig.append(ents)
    g = nx.Graph()
    g.add_nodes_from(range(len(plans)))
    for i in range(len(plans)):
        for j in range(i + 1, len(plans)):
            if plans[i].tools[0].category != plans[j].tools[0].category:
                continue
            shared = [e for e in set(sig[i]) & set(sig[j]) if sig[i][e] & sig[j][e] or not (sig[i][e] or sig[j][e])]
            if len(shared) >= 2:
                g.add_edge(i, j, weight=len(shared))
    out = []
    for comm in nx.community.louvain_communities(g, weight="weight", seed=7):
        members = sorted(comm)
        if len(members) > 1:
            union = set().union(*(sig[i] for i in members))
            if len(union) > MAX_COLLECTIONS:
                out.extend([i] for i in members)
                continue
        out.append(members)
    return sorted(out)


def infer_worlds(tools: list[ToolSpec], today: str, cluster: bool = True) -> list[InferredWorld]:
    """Worlds and bindings for crawled tools, by code (deterministic, sorted by servers). An optional
    parameter of a lookup with no key parameter is a match: the executor skips one the call leaves out."""
    by_server: dict[str, list[ToolSpec]] = defaultdict(list)
    for t in sorted(tools, key=lambda t: (t.server or "", t.name, t.tool_id)):
        by_server[t.server or "unknown"].append(t)
    plans = [_read_server(ts) for _, ts in sorted(by_server.items())]
    for p in plans:
        _merge_entities(p.readings)
    groups = _clusters(plans) if cluster else [[i] for i in range(len(plans))]
    out: list[InferredWorld] = []
    for grp in groups:
        servers = [plans[i].servers[0] for i in grp]
        readings = [r for i in grp for r in plans[i].readings]
        gtools = [t for i in grp for t in plans[i].tools]
        unbound = {k: v for i in grp for k, v in plans[i].unbound.items()}
        parts = _split(readings)
        for n, part in enumerate(parts):
            world, bindings, left = _build(servers, part, gtools, today, n if len(parts) > 1 else None)
            out.append(InferredWorld(world, bindings, left | (unbound if n == 0 else {}), servers))
    return sorted(out, key=lambda w: (w.servers, w.world.world_id if w.world else ""))


def binding_coverage(inferred: list[InferredWorld], tools: list[ToolSpec]) -> dict[str, Any]:
    """How many of the tools bind to code semantics, by server, and why the rest do not."""
    bound = {tid for w in inferred for tid in w.bindings}
    reasons = {tid: r for w in inferred for tid, r in w.unbound.items() if tid not in bound}
    by_server: dict[str, dict[str, Any]] = {}
    for t in tools:
        s = by_server.setdefault(t.server or "unknown", {"server": t.server or "unknown", "tools": 0, "bound": 0})
        s["tools"] += 1
        s["bound"] += t.tool_id in bound
    best: dict[str, int] = defaultdict(int)
    for w in inferred:
        if w.world is None:
            continue
        for s in w.servers:
            n = sum(1 for tid in w.bindings if any(t.tool_id == tid and t.server == s for t in tools))
            best[s] = max(best[s], n)
    for s, row in by_server.items():
        row["best_world_bound"] = best.get(s, 0)
    groups = Counter(r.split(":", 1)[0] for r in reasons.values())
    n = len(tools)
    return {
        "tools": n,
        "bound": len(bound & {t.tool_id for t in tools}),
        "bound_share": round(len(bound & {t.tool_id for t in tools}) / n, 4) if n else 0.0,
        "servers": len(by_server),
        "servers_with_world_3plus": sum(1 for s in by_server if best.get(s, 0) >= 3),
        "worlds": sum(1 for w in inferred if w.world is not None),
        "actions": dict(sorted(Counter(b.action for w in inferred for b in w.bindings.values()).items())),
        "with_ignored_filters": sum(
            1 for w in inferred for b in w.bindings.values() if any("filter" in r for r in b.ignored.values())
        ),
        "unbound_reasons": dict(sorted(groups.items(), key=lambda kv: (-kv[1], kv[0]))),
        "by_server": sorted(by_server.values(), key=lambda r: r["server"]),
    }
