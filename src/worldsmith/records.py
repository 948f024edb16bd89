"""The records that pass between stages, and their typed parts, defined once (docs/architecture.md).

Parquet columns mirror the fields. Fields whose shape varies (JSON Schemas, world states,
messages, rubrics, calls) are stored as JSON text columns, listed in `json_fields`, and
queried with DuckDB's JSON functions (`calls->>'$[0].executor'`); in Python they are typed
models. Every record has a stable id (`id_field`), so the store can make a second write of
the same record a no-op.
"""

from __future__ import annotations

import hashlib
import json
import types
import typing
from datetime import UTC, datetime
from typing import Any, ClassVar, Literal

import pyarrow as pa
from pydantic import BaseModel, ConfigDict, Field

from worldsmith.vocab import EXECUTED_ACTIONS, CriterionKind, FieldType, HackKind, StateOp, ToolAction, TrajectoryStatus


def utcnow() -> datetime:
    return datetime.now(UTC)


def content_id(*parts: Any, prefix: str = "") -> str:
    """A stable id: sha256 of the canonical JSON of `parts`, 16 hex chars."""
    canonical = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return prefix + hashlib.sha256(canonical.encode()).hexdigest()[:16]


class Part(BaseModel):
    """A typed part of a record (stored inside one of its JSON columns)."""

    model_config = ConfigDict(extra="forbid")


class Record(BaseModel):
    """Base of every stored record."""

    model_config = ConfigDict(extra="forbid")

    stage: ClassVar[str]  # the store folder / catalog view name
    id_field: ClassVar[str]
    json_fields: ClassVar[frozenset[str]] = frozenset()

    @property
    def record_id(self) -> str:
        return getattr(self, self.id_field)

    def to_row(self) -> dict[str, Any]:
        row = self.model_dump(mode="python")
        for name in self.json_fields:
            row[name] = json.dumps(row[name], sort_keys=False, ensure_ascii=False, default=str)
        return row

    @classmethod
    def from_row(cls, row: dict[str, Any]):
        data = dict(row)
        for name in cls.json_fields:
            if isinstance(data.get(name), str):
                data[name] = json.loads(data[name])
        return cls.model_validate({k: v for k, v in data.items() if k in cls.model_fields})

    @classmethod
    def arrow_schema(cls) -> pa.Schema:
        return pa.schema([pa.field(name, _arrow_type(cls, name, f.annotation)) for name, f in cls.model_fields.items()])


def _arrow_type(cls: type[Record], name: str, annotation: Any) -> pa.DataType:
    if name in cls.json_fields:
        return pa.string()
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(args) == 1:
        annotation = args[0]
    origin = typing.get_origin(annotation)
    if origin is Literal or annotation is str:
        return pa.string()
    if annotation is bool:
        return pa.bool_()
    if annotation is int:
        return pa.int64()
    if annotation is float:
        return pa.float64()
    if annotation is datetime:
        return pa.timestamp("us", tz="UTC")
    if origin is list and typing.get_args(annotation)[0] is str:
        return pa.list_(pa.string())
    raise TypeError(f"{cls.__name__}.{name}: no column type for {annotation!r}; add it to json_fields")


# --------------------------------------------------------------------------- tools


class ToolAnnotations(BaseModel):
    """MCP tool hints."""

    model_config = ConfigDict(extra="allow")
    readOnlyHint: bool | None = None
    destructiveHint: bool | None = None
    idempotentHint: bool | None = None
    openWorldHint: bool | None = None
    title: str | None = None


class ToolBinding(Part):
    """What a synthetic tool does in its world, so code can execute it: an action on one
    collection, each parameter bound to a field. `custom` tools keep the LLM simulator."""

    world_id: str
    collection: str
    action: ToolAction
    key_param: str | None = None  # get, update, delete: the parameter that names the record
    params: dict[str, str] = Field(default_factory=dict)  # parameter -> field: list filters, create/update values
    # field -> value the tool always sets (update) or filters on (list)
    fixed: dict[str, Any] = Field(default_factory=dict)
    # a domain pack's action (custom verbs: renew_loan): code in the world's pack runs it
    operation: str | None = None
    # get, update, delete of a crawled tool: parameters that name the record together (owner + repo + number)
    match: dict[str, str] = Field(default_factory=dict)
    # list: parameters matched as a case-insensitive substring of any text field (search_papers' query)
    search: list[str] = Field(default_factory=list)
    limit_param: str | None = None  # list: the parameter that caps how many records come back
    # parameters with no effect on the state (an output format, a verbosity flag), and why
    ignored: dict[str, str] = Field(default_factory=dict)

    @property
    def executed(self) -> bool:
        """Whether code runs this tool on the world state (else the LLM tool simulator plays it)."""
        return self.action in EXECUTED_ACTIONS or self.operation is not None


class ToolSpec(Record):
    stage: ClassVar[str] = "tools"
    id_field: ClassVar[str] = "tool_id"
    json_fields: ClassVar[frozenset[str]] = frozenset(
        {"input_schema", "output_schema", "annotations", "extra", "binding"}
    )

    tool_id: str
    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] = Field(default_factory=dict)  # MCP's ToolAnnotations, as the server sent them
    source: Literal["mcp", "evolved", "seed", "pack"]
    server: str | None = None
    category: str | None = None
    domain: str | None = None
    parent_id: str | None = None
    operator: str | None = None  # evolution operator that made it from parent_id
    extra: dict[str, Any] = Field(default_factory=dict)  # provenance: package version, protocol, entities ...
    binding: ToolBinding | None = None  # executable semantics in a world (synthetic tools); None: simulated or real
    created_at: datetime = Field(default_factory=utcnow)

    @property
    def hints(self) -> ToolAnnotations:
        """The MCP annotations, typed (a hint the server did not send is None)."""
        return ToolAnnotations.model_validate(self.annotations)

    @staticmethod
    def make_id(name: str, description: str, input_schema: dict, output_schema: dict | None, server: str | None) -> str:
        return content_id(name, description, input_schema, output_schema, server, prefix="tool_")


class Rejection(Record):
    """Anything a stage refused, with its reason: nothing is dropped without one."""

    stage: ClassVar[str] = "rejections"
    id_field: ClassVar[str] = "rejection_id"
    json_fields: ClassVar[frozenset[str]] = frozenset({"payload"})

    rejection_id: str
    kind: str  # what was rejected: tool_spec, task, trajectory, llm_output, server ...
    subject: str  # its name or id
    reason: str  # short machine-groupable code, e.g. invalid_schema, parse_error
    detail: str
    payload: Any = None
    created_at: datetime = Field(default_factory=utcnow)


class Domain(Record):
    """An application domain proposed inside a taxonomy category (the evolve stage's first level)."""

    stage: ClassVar[str] = "domains"
    id_field: ClassVar[str] = "domain_id"

    domain_id: str
    category: str
    name: str
    description: str
    entities: list[str]  # world entities its tools read or change (accounts, orders, ...)
    created_at: datetime = Field(default_factory=utcnow)


class FieldSpec(Part):
    """One field of a collection's records (the key field is the collection's own)."""

    name: str
    type: FieldType = "string"
    format: str = "text"  # how seeding fills it: a vocab.FIELD_FORMATS name
    enum: list[str] = Field(default_factory=list)  # the allowed values (status-like fields)
    ref: str | None = None  # a collection: the value is one of its keys
    unique: bool = False  # no two records share the value (creating one is a conflict)
    required: bool = True
    description: str = ""
    # values the source documents (a crawled schema's examples, default, "e.g. ..."): seeding draws
    # from them, so a world reads like the service's own data ("us-east-1", not a random word)
    examples: list[str] = Field(default_factory=list)


class CollectionSpec(Part):
    """A collection of the world state: `state[name]` is a list of records keyed by `key`."""

    name: str  # plural snake_case: the state's top-level key ("orders")
    entity: str  # singular, for prose and tool names ("order")
    key: str  # the key field ("order_id"), values like "ord-1042"
    id_prefix: str  # "ord"
    fields: list[FieldSpec]
    # enum field -> value -> values it may become
    transitions: dict[str, dict[str, list[str]]] = Field(default_factory=dict)


class PolicyRule(Part):
    """A business rule of the world, stated in each agent's policy. `transition` rules are
    also enforced by the executor; `forbid` rules only by the agent (as in tau2-bench, the
    tools allow what the policy forbids: that is what a refusal task tests)."""

    rule_id: str
    # check: enforced by a domain pack action's code (the text tells the agent)
    kind: Literal["transition", "forbid", "confirm", "check"]
    collection: str
    action: ToolAction
    field: str | None = None
    values: list[str] = Field(default_factory=list)  # forbid: the action is refused while `field` holds one of these
    text: str


class World(Record):
    """A domain's world schema: typed collections, keys, references, enums with transitions,
    and the rules agents follow. Designed by the LLM and validated, or derived by code."""

    stage: ClassVar[str] = "worlds"
    id_field: ClassVar[str] = "world_id"
    json_fields: ClassVar[frozenset[str]] = frozenset({"collections", "rules", "seed_records"})

    world_id: str
    domain_id: str
    domain: str
    category: str
    description: str = ""
    collections: list[CollectionSpec]
    rules: list[PolicyRule] = Field(default_factory=list)
    today: str  # ISO date the world's dates are drawn around (a fixed "now", so worlds replay)
    # llm: designed by the model | derived: from the domain's entities | pack: a domain pack (worlds/<name>/)
    # | crawled: inferred from a crawled MCP server's tools
    source: Literal["llm", "derived", "pack", "crawled"]
    problem: str | None = None  # why the LLM's design was refused, when it was
    pack: str | None = None  # the domain pack it was loaded from (its actions run its custom tools)
    pack_dir: str | None = None  # that pack's folder, where its actions module is imported from
    policy: str = ""  # the policy text agents are given, beyond the rules (a pack's, written by hand)
    servers: list[str] = Field(default_factory=list)  # crawled: the MCP servers its tools come from
    seed_records: list[int] = Field(default_factory=list)  # a pack's [least, most] records per collection; []: tasks
    created_at: datetime = Field(default_factory=utcnow)

    def collection(self, name: str) -> CollectionSpec | None:
        return next((c for c in self.collections if c.name == name), None)


class Bundle(Record):
    """A coherent tool set drawn from the tool graph, the seed of one agent."""

    stage: ClassVar[str] = "bundles"
    id_field: ClassVar[str] = "bundle_id"

    bundle_id: str
    tool_ids: list[str]  # the core tools, in a stable order
    distractor_ids: list[str]  # tools from other domains, added to test tool choice
    domain: str
    sources: list[str]  # source of each core tool (mcp / evolved / seed)
    seed: int
    created_at: datetime = Field(default_factory=utcnow)


# ------------------------------------------------------------------- agents and tasks


class Policies(Part):
    """An agent's designed role and rules, rendered into its system prompt."""

    role: str = ""
    confirm_before: list[str] = Field(default_factory=list)  # tool names that need the user's explicit confirmation
    never: list[str] = Field(default_factory=list)
    guidelines: list[str] = Field(default_factory=list)
    rules: list[str] = Field(default_factory=list)  # the world's rules, as the executor and the tasks apply them
    rule_ids: list[str] = Field(default_factory=list)
    policy: str = ""  # the world's own policy text (a domain pack's, written by hand)
    source: Literal["llm", "template"] = "llm"  # who wrote the role's voice (the rules are the world's either way)


class Agent(Record):
    """A system prompt over a tool bundle. OpenAI tool objects are derived from `tool_ids`."""

    stage: ClassVar[str] = "agents"
    id_field: ClassVar[str] = "agent_id"
    json_fields: ClassVar[frozenset[str]] = frozenset({"policies"})

    agent_id: str
    bundle_id: str
    system_prompt: str
    tool_ids: list[str]  # the bundle's tools, then its distractors
    domain: str
    world_id: str | None = None  # the world most of its bound tools act on (its tasks are drawn there)
    style: str
    strictness: str
    policies: Policies = Field(default_factory=Policies)
    created_at: datetime = Field(default_factory=utcnow)


class Criterion(Part):
    criterion_id: str
    kind: CriterionKind
    description: str
    # state: at a JSON Pointer, or (blueprint tasks) a record of a collection by its key, or a whole collection (guards)
    pointer: str | None = None
    collection: str | None = None
    key: str | None = None  # the record's key; None with `collection`: the collection (unchanged_except)
    key_field: str | None = None  # the collection's key field ("order_id")
    field: str | None = None  # None: the whole record
    op: StateOp | None = None
    value: Any = None
    # call
    tool: str | None = None
    # call, a read: the bundle's other tools bound to the very same read (a crawled server's get_echojs_top and
    # get_echojs_latest list the same records); a call of one of them with the arguments counts as `tool`'s
    same_read: list[str] = Field(default_factory=list)
    must: bool = True
    arguments: dict[str, Any] = Field(default_factory=dict)
    order: int | None = None
    after_user_gives: str | None = None  # clarification: the matched call comes after a user message holding this value
    # answer
    contains: list[str] = Field(default_factory=list)
    any_of: bool = False  # answer: one of `contains` is enough
    # answer: a reply declines (answers.declines); judge: the same is its deterministic form where no critic runs,
    # so a refusal or irrelevance criterion is enforced on the CPU default too
    declines: bool = False


class Rubric(Part):
    criteria: list[Criterion]
    expected_tool_pattern: list[str] = Field(default_factory=list)
    checkpoints: list[str] = Field(default_factory=list)


class Persona(Part):
    communication: str = "casual"  # brief | chatty | formal | casual | confused
    patience: str = "medium"  # low | medium | high
    expertise: str = "intermediate"  # novice | intermediate | expert


class UserGoal(Part):
    """What the simulated user wants (`request`, its opening message) and the facts only it knows."""

    request: str
    facts: dict[str, str] = Field(default_factory=dict)


class GoldCall(Part):
    """One call of a blueprint's gold chain, as it was executed on the task's world."""

    tool: str  # the spec's name
    tool_id: str
    arguments: dict[str, Any]
    ok: bool
    result: Any = None
    patch: list[dict[str, Any]] = Field(default_factory=list)
    executor: str = "code"  # code | simulated (memoized: the same call in the same state gets this result again)
    state_hash: str = ""  # of the state the call met (the simulator's memo key)


class Blueprint(Part):
    """A task proven by execution (APIGen-MT): the gold chain ran on a copy of the initial state
    and every call succeeded; the rubric is read off its end state."""

    calls: list[GoldCall] = Field(default_factory=list)
    end_state: dict[str, Any] = Field(default_factory=dict)
    touched: list[str] = Field(default_factory=list)  # collections the chain changed
    asked: dict[str, str] = Field(default_factory=dict)  # what the user wants to learn -> its value
    withheld: dict[str, str] = Field(default_factory=dict)  # clarification: facts left out of the request
    rule_id: str | None = None  # refusal: the rule that forbids what the user asks
    # llm: written by the task writer model | grammar: worded by prompts/user_request.yaml | template: the plain form
    request_source: Literal["llm", "grammar", "template"] = "template"
    request_problems: list[str] = Field(default_factory=list)  # why the model's requests were refused, when they were
    # lookup | update | multi_intent | find_then_act | follow_reference | conditional | aggregate | refusal |
    # already_done | ask_for_info | irrelevance | error_recovery (tasks/blueprint.family_of)
    family: str = ""


class Task(Record):
    stage: ClassVar[str] = "tasks"
    id_field: ClassVar[str] = "task_id"
    json_fields: ClassVar[frozenset[str]] = frozenset(
        {"user_persona", "user_goal", "initial_state", "rubric", "blueprint"}
    )

    task_id: str
    agent_id: str
    difficulty: str
    world_id: str | None = None
    # None: a free-form task (tasks.mode freeform), written in one shot and not executed
    blueprint: Blueprint | None = None
    user_persona: Persona
    user_goal: UserGoal
    initial_state: dict[str, Any]
    rubric: Rubric
    created_at: datetime = Field(default_factory=utcnow)

    @property
    def family(self) -> str:
        """The blueprint's task family; a free-form task's difficulty."""
        return (self.blueprint.family if self.blueprint is not None else "") or self.difficulty


# ------------------------------------------------------------------ trajectories


class ToolCall(Part):
    """One tool call of an episode, as it was executed."""

    turn: int  # user messages before it
    call_id: str
    name: str  # the OpenAI name the agent called
    tool: str | None = None  # the spec's original name (rubrics use it); None: no such tool
    tool_id: str | None = None
    arguments: Any = None  # the parsed arguments (the raw text when they were not JSON)
    read_only: bool = False
    executor: str  # simulated | real | unknown_tool | invalid_arguments | fault
    ok: bool
    error: str | None = None
    fault: str | None = None  # the injected fault's kind
    patch_ops: int = 0
    attempts: int = 0


class FaultEvent(Part):
    turn: int
    call_id: str
    tool: str
    kind: str  # a vocab.FAULTS kind
    forced: bool = False  # part of the task (error_recovery), not a random draw


class PatchEntry(Part):
    call_id: str
    tool: str
    patch: list[dict[str, Any]]  # RFC 6902 operations


class WorldStates(Part):
    """The world of an episode: the state after any call is `initial` plus the patches before it."""

    initial: dict[str, Any] = Field(default_factory=dict)
    final: dict[str, Any] = Field(default_factory=dict)
    patches: list[PatchEntry] = Field(default_factory=list)


class Trajectory(Record):
    """One simulated episode. `status` says how it ended; `reason` says why (user_stop,
    user_transfer, user_give_up, or for errors `agent_output: ...`, `tool_sim_failed: ...`,
    `user_sim_failed: ...`). Simulator failures are not the agent's fault: never training data."""

    stage: ClassVar[str] = "trajectories"
    id_field: ClassVar[str] = "trajectory_id"
    json_fields: ClassVar[frozenset[str]] = frozenset(
        {"messages", "tools", "world_states", "calls", "faults", "usage", "models", "agent_logprobs"}
    )

    trajectory_id: str
    task_id: str
    agent_id: str
    sample: int  # 0 .. samples_per_task-1
    seed: int
    messages: list[dict[str, Any]]  # OpenAI chat format: assistant tool_calls, tool replies with tool_call_id
    tools: list[dict[str, Any]]  # the OpenAI function tools the agent was offered, in order
    world_states: WorldStates
    calls: list[ToolCall] = Field(default_factory=list)
    faults: list[FaultEvent] = Field(default_factory=list)
    usage: dict[str, Any] = Field(default_factory=dict)  # per role: calls, prompt_tokens, completion_tokens
    models: dict[str, Any] = Field(default_factory=dict)  # per role: the model name
    model: str  # the agent policy's model
    decoding: Literal["native", "constrained", "grounded"] = "constrained"  # how the agent's turns were decoded
    reply_resamples: int = 0  # replies sampled again: not prose, or rejected by a check (reply_attempts)
    # message index -> the engine's (token, log-probability) of that agent message as sampled (`logprobs` on the
    # agent role; a native turn redone constrained has none)
    agent_logprobs: dict[str, list[tuple[str, float]]] = Field(default_factory=dict)
    status: TrajectoryStatus
    reason: str | None = None
    raw: str | None = None  # the model output that could not be used, when one ended the episode
    turns: int = 0  # user messages
    tool_calls: int = 0
    generated_tokens: int = 0
    latency_s: float = 0.0
    created_at: datetime = Field(default_factory=utcnow)


class CriterionResult(Part):
    """One criterion's verdict with its evidence; `critic_passed` is the critic's view of a
    machine-checked criterion (for the agreement figures)."""

    criterion_id: str
    kind: CriterionKind
    description: str
    passed: bool | None  # None: the critic gave no answer
    evidence: str | None = None
    source: Literal["deterministic", "critic"] = "deterministic"
    critic_passed: bool | None = None
    critic_reason: str | None = None


class HackFinding(Part):
    kind: HackKind
    evidence: str


class ClaimFinding(Part):
    """A claim of a reply the judge did not find supported (worldsmith.judge.claims): contradicted or unverifiable,
    with the clause it was read from and why; `critic` is the critic's ruling on an unverifiable one (policy critic)."""

    message: int
    kind: str  # value | attribution | count | action | state | failure | words
    status: Literal["contradicted", "unverifiable"]
    text: str
    why: str
    critic: bool | None = None  # None: not asked; True: the critic found it supported


class RubricVerdict(Part):
    passed: bool
    reason: str


class CriticReport(Part):
    """The critic's answer: per rubric passed/reason and a 1-10 score, or why there is none."""

    ok: bool
    score: int | None = None
    rubrics: dict[str, RubricVerdict] = Field(default_factory=dict)
    model: str | None = None
    error: str | None = None
    raw: str | None = None


class Reward(Part):
    """An episode's reward for RL, by component (judge.reward): what each check contributed, so a
    reward curve can be read by its parts. None where a component does not apply (no critic)."""

    verifiable: float  # 1.0: every deterministic check holds (criteria, status, hacks, faults)
    verifiable_fraction: float  # share of the deterministic criteria passed
    rubric: float | None = None  # the critic's score / 10
    format: float  # share of the agent's calls that parsed into a known tool with valid arguments
    budget: float  # 0 within the task's token budget; -overrun / budget, down to -1
    agent_tokens: int = 0
    budget_tokens: int = 0
    total: float


class Verdict(Record):
    """The judge's decision on one trajectory, with every check's result and evidence, so
    "why was this dropped" and "which criteria fail most" are queries."""

    stage: ClassVar[str] = "verdicts"
    id_field: ClassVar[str] = "trajectory_id"
    json_fields: ClassVar[frozenset[str]] = frozenset({"criteria", "hacks", "claims", "critic", "reward"})

    trajectory_id: str
    task_id: str
    agent_id: str
    criteria: list[CriterionResult]
    hacks: list[HackFinding] = Field(default_factory=list)
    # the claims not found supported; `unverifiable` the policy that judged them (judge.unverifiable)
    claims: list[ClaimFinding] = Field(default_factory=list)
    unverifiable: str | None = None
    critic: CriticReport | None = None  # None: the critic did not run
    critic_score: float | None = None
    faults: int = 0
    faults_handled: bool | None = None  # None: no fault was injected
    passed: bool
    # why it failed: criterion:c2, hack:unbacked_claim, critic_score, status:error ...
    reasons: list[str] = Field(default_factory=list)
    reward: Reward | None = None  # None: judged before rewards were kept
    created_at: datetime = Field(default_factory=utcnow)


class SFTExample(Record):
    stage: ClassVar[str] = "sft"
    id_field: ClassVar[str] = "example_id"
    json_fields: ClassVar[frozenset[str]] = frozenset({"messages", "metadata"})

    example_id: str
    messages: list[dict[str, Any]]
    tools: str  # JSON text of OpenAI function tools: TRL json.loads a string column
    metadata: dict[str, Any]
    split: Literal["train", "validation"] = "train"
    created_at: datetime = Field(default_factory=utcnow)


HELD_OUT_FILE = "held_out.json"  # in an export folder: what its validation split holds out (eval reads it)


class HeldOut(BaseModel):
    """An export's validation split (`held_out.json`): whole worlds (`split_by: world`; agents without
    a world go by agent) or agents. Under `world` the worlds are drawn among every world the run's
    agents act in, kept episodes or not, so an eval on them is not biased towards what the policy solved."""

    model_config = ConfigDict(extra="forbid")

    split_by: Literal["world", "agent"]
    worlds: list[str] = Field(default_factory=list)
    agents: list[str] = Field(default_factory=list)  # every agent whose examples go to validation

    @classmethod
    def read(cls, export: Any) -> HeldOut | None:
        """The split an export folder records; None for a folder without one (written before splits by world)."""
        path = export / HELD_OUT_FILE if export is not None else None
        return cls.model_validate_json(path.read_text()) if path is not None and path.exists() else None


# -------------------------------------------------------------------- smoke stage


class SmokeResult(Record):
    """One request of the smoke stage: a structured record or a tool call, or its failure."""

    stage: ClassVar[str] = "smoke"
    id_field: ClassVar[str] = "smoke_id"
    json_fields: ClassVar[frozenset[str]] = frozenset({"request", "output", "tool_calls"})

    smoke_id: str
    kind: Literal["structured", "tool_call"]
    ok: bool
    request: dict[str, Any]
    output: Any = None
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    error: str | None = None
    raw: str | None = None
    model: str
    endpoint: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    created_at: datetime = Field(default_factory=utcnow)


# -------------------------------------------------------------------- evaluation


class ModelEval(Record):
    """One model's figures on a run's held-out tasks (`worldsmith eval`); its episodes and
    verdicts are in their own run, `eval_run_id`."""

    stage: ClassVar[str] = "evals"
    id_field: ClassVar[str] = "eval_run_id"
    json_fields: ClassVar[frozenset[str]] = frozenset({"pass_hat", "statuses", "reasons", "by_family"})

    eval_run_id: str
    label: str  # base | finetuned | a name given on the command line
    mode: str = "constrained"  # the tool-call mode it played in (constrained | native)
    grounding: bool = False
    model_path: str  # the served folder or file ("" = the packaged SmolLM2)
    engine: str
    tasks: int
    samples_per_task: int
    trajectories: int
    passed: int
    pass_rate: float | None = None
    pass_hat: dict[str, float] = Field(default_factory=dict)  # "k" -> pass^k (tau-bench: every one of k samples passes)
    tool_calls: int = 0  # attempted by the agent, including unparseable ones
    valid_tool_calls: int = 0  # a known tool with schema-valid arguments
    tool_call_validity: float | None = None
    exact_argument_rate: float | None = None  # gold calls of the tasks the agent made with exactly the gold arguments
    call_rate: float | None = None  # episodes of tasks with a gold call where the agent called any tool at all
    # episodes of tasks no tool serves (a blueprint with no gold call: irrelevance) where the agent called one anyway;
    # a model that learned to call everything shows here first
    needless_call_rate: float | None = None
    # episodes of tasks that want a call (gold calls, or a free-form task) whose every tool call parsed into a known
    # tool with schema-valid arguments, at least one made: the format, apart from whether the calls were right
    format_rate: float | None = None
    by_family: dict[str, list[int]] = Field(default_factory=dict)  # task family -> [passed, episodes]
    statuses: dict[str, int] = Field(default_factory=dict)
    # episodes the user or tool simulator ended (not the policy's fault; they count as not passed)
    simulator_failures: int = 0
    # episodes ended because the policy's server failed (timeout, connection, HTTP error after retries): not
    # the model's doing; they count as not passed, and an eval where every episode did is void
    server_errors: int = 0
    reasons: dict[str, int] = Field(default_factory=dict)  # the judge's drop reasons, counted
    generated_tokens: int = 0  # by the agent policy
    created_at: datetime = Field(default_factory=utcnow)


# ------------------------------------------------------------ coding worlds (issue 52)


class RepoWorld(Record):
    """A repository as a world: a real project at a pinned version (worlds/repos.yaml), fetched and checked
    against its hash, whose test suite passed in the sandbox (the baseline every bug task is measured from)."""

    stage: ClassVar[str] = "repo_worlds"
    id_field: ClassVar[str] = "repo_id"

    repo_id: str  # <name>-<version>
    name: str
    version: str
    source: str  # pypi:name==version | path:/abs | git:url@commit
    sha256: str  # of the sdist, or of the tree's files (path, git)
    python_path: str = "."
    held_out: bool = False  # evaluation only
    baseline_tests: int = 0  # tests that pass on the pristine tree (twice: flaky ones left out)
    baseline_s: float = 0.0
    created_at: datetime = Field(default_factory=utcnow)


class CodingTask(Record):
    """A BugFixer task proven by execution (coding/bugs.py): the bug made the FAIL_TO_PASS tests fail in the
    sandbox, and the gold patch on the buggy tree made every FAIL_TO_PASS and PASS_TO_PASS test pass."""

    stage: ClassVar[str] = "coding_tasks"
    id_field: ClassVar[str] = "task_id"
    json_fields: ClassVar[frozenset[str]] = frozenset({"failure_output", "seconds"})

    task_id: str
    # bugfix: fix the library so the failing tests pass | testwriter: write a test that fails on the buggy code and
    # passes on the fixed one (the bug's failing tests are taken out of the world)
    family: Literal["bugfix", "testwriter"] = "bugfix"
    repo: str  # repos.yaml name
    version: str
    repo_sha256: str
    source: str
    python_path: str = "."
    held_out: bool = False
    operator: str  # the mutation operator (never shown to the agent)
    file: str
    line: int
    description: str
    bug_patch: str  # pristine -> buggy: applied to the pristine tree, it makes the task's world
    gold_patch: str  # buggy -> pristine: the fix (testwriter: the tests taken out, put back)
    fixed_patch: str = ""  # testwriter: pristine -> the fixed world (the same tests taken out, no bug)
    fail_to_pass: list[str]
    pass_to_pass: list[str]
    statement: str  # the user's bug report (prompts/bug_report.yaml), written from the failing output
    statement_source: Literal["grammar", "llm"] = "grammar"
    failure_output: dict[str, str] = Field(default_factory=dict)  # a few failing tests' pytest text
    seconds: dict[str, float] = Field(default_factory=dict)  # the mutant's and the gold run's

    @staticmethod
    def make_id(repo: str, version: str, key: str) -> str:
        return content_id(repo, version, key, prefix="bug-")


class CodingJudgement(Part):
    """A patch judged by execution in a fresh sandbox (`coding.verify.judge_patch`)."""

    task_id: str
    applied: bool  # the patch applied to the buggy tree
    tests_edited: list[str] = Field(default_factory=list)  # test files the patch touched (not allowed)
    source_edited: list[str] = Field(default_factory=list)  # testwriter: library files the patch touched (not allowed)
    discriminating: list[str] = Field(default_factory=list)  # testwriter: new tests failing on the bug, passing fixed
    fail_to_pass: dict[str, str] = Field(default_factory=dict)  # test -> outcome after the patch
    pass_to_pass_broken: dict[str, str] = Field(default_factory=dict)  # the kept tests that no longer pass
    tests_fixed: float = 0.0  # share of FAIL_TO_PASS that pass
    tests_kept: float = 0.0  # share of PASS_TO_PASS that still pass
    resolved: bool = False  # applied, no test edited, every listed test passes (Kimi-Dev's reward 1)
    problems: list[str] = Field(default_factory=list)
    seconds: float = 0.0

    @property
    def reward(self) -> dict[str, float]:
        """The reward's components as `verdicts.reward` takes them."""
        return {"tests_fixed": self.tests_fixed, "tests_kept": self.tests_kept, "resolved": float(self.resolved)}


class CodingEpisode(Record):
    """One coding episode: the conversation (an OpenAI-format trajectory whose tool calls ran in the sandbox)
    and the patch it left, as a unified diff against the buggy tree; `judgement` is the patch judged by
    execution (`coding.verify.judge_patch`) when it was judged."""

    stage: ClassVar[str] = "coding_episodes"
    id_field: ClassVar[str] = "trajectory_id"
    json_fields: ClassVar[frozenset[str]] = frozenset({"trajectory", "judgement"})

    trajectory_id: str
    task_id: str  # a CodingTask
    repo: str
    model: str = ""
    status: str = "finished"
    reason: str | None = None
    tool_calls: int = 0
    patch: str = ""
    trajectory: dict[str, Any] = Field(default_factory=dict)  # Trajectory.model_dump(mode="json")
    judgement: CodingJudgement | None = None
    resolved: bool = False
    created_at: datetime = Field(default_factory=utcnow)


RECORD_TYPES: tuple[type[Record], ...] = (
    ToolSpec,
    Rejection,
    Domain,
    World,
    Bundle,
    Agent,
    Task,
    Trajectory,
    Verdict,
    SFTExample,
    SmokeResult,
    ModelEval,
    RepoWorld,
    CodingTask,
    CodingEpisode,
)
