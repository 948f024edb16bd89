"""The one configuration: `pipeline.yaml` loaded into pydantic models.

A bad file fails before any work, with one line per problem naming the key path, the value
and what was expected (`llm.roles.critic.temperature: got "hot", expected a number between
0 and 2`). CLI overrides (`--set a.b=value`) are applied to the raw document before
validation, so they are checked exactly like the file.
"""

from __future__ import annotations

import copy
import datetime
import hashlib
import json
import os
import types
import typing
from pathlib import Path
from typing import Annotated, Any, Literal

import annotated_types
import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, create_model, model_validator

from worldsmith.vocab import (
    DIFFICULTIES,
    FAULTS,
    HACK_KINDS,
    ROLES,
    EndedByLimit,
    HackKind,
    UnverifiablePolicy,
    export_jsonl,
)

ENV_CONFIG = "WORLDSMITH_CONFIG"
DEFAULT_CONFIG = "pipeline.yaml"
EMBEDDED = "embedded"
EXECUTION_KEYS = ("executor", "ray_address", "ray_cpus_per_shard")  # run keys that say how, not what
# Keys added after runs were made, whose null default keeps the old behaviour: left out of the hash
# while null, so a run made before they existed keeps its id and resumes.
NULL_NEUTRAL_KEYS = (("llm", "policy", "parallel"), ("llm", "server", "threads_batch"))
# Keys that shape only what outside harnesses get from a served model (the pipeline sends its own
# max_tokens with every request): left out of the hash, so runs keep their ids.
SERVING_KEYS = (("llm", "server", "max_tokens"),)
# llama.cpp gives each of its `parallel` slots ctx_size / parallel tokens of KV cache; a request longer than its
# slot's share fails. Each sequence needs room for an episode (the agent's system prompt, tools, turns).
LLAMACPP_MIN_TOKENS_PER_SEQUENCE = 2048


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


Temperature = Annotated[float, Field(ge=0, le=2)]
Probability = Annotated[float, Field(ge=0, le=1)]
PositiveInt = Annotated[int, Field(ge=1, strict=True)]  # strict: `true` is not the count 1
NonNegInt = Annotated[int, Field(ge=0, strict=True)]
PositiveFloat = Annotated[float, Field(gt=0)]


class RunConfig(Strict):
    name: str = "worldsmith"
    seed: NonNegInt = 1234
    data_dir: str = "data"
    prompts_dir: str = "prompts"
    tool_specs_dir: str = "tool_specs"
    # input records per Prefect task, for the stages that split (agents, tasks, rollouts, judge)
    shard_size: PositiveInt = 100
    # Where the shards of a stage that splits run: one after another in the flow's process
    # (local), or at once on a Ray cluster through prefect-ray (ray). How a run executes
    # does not change what it makes, so these keys are not part of the run id's hash.
    executor: Literal["local", "ray"] = "local"
    # None or "auto": ray.init()'s own search (RAY_ADDRESS, else a `ray start` cluster on this machine, else a new
    # instance for the run); "head:6379" or "ray://head:10001": that cluster
    ray_address: str | None = None
    ray_cpus_per_shard: PositiveFloat = 1.0  # Ray CPUs a shard task holds (mostly it waits on the model)

    @model_validator(mode="after")
    def _ray_address_needs_ray(self) -> RunConfig:
        if self.ray_address is not None and self.executor != "ray":
            raise ValueError(f"run.ray_address: set to {self.ray_address!r}, but run.executor is local; set ray")
        return self


class ServerConfig(Strict):
    """The model server worldsmith starts itself when an endpoint's url is `embedded`."""

    engine: Literal["llamacpp", "vllm"] = "llamacpp"
    model: str = "smollm2-135m"  # the name the server answers to
    model_path: str | None = None  # GGUF (llamacpp) or HF folder (vllm); default: the packaged SmolLM2
    host: str = "127.0.0.1"
    port: Annotated[int, Field(ge=1, le=65535, strict=True)] = 8010
    ctx_size: PositiveInt = 32768  # llama.cpp: ctx_size / parallel tokens per slot (4,096 at 8)
    parallel: PositiveInt = 8
    # Reply length for a request that sends no max_tokens (outside harnesses such as BFCL send
    # none, and a base model then ran on for 3,200 tokens): llama.cpp's n_predict, vLLM's
    # max_new_tokens. A request's own max_tokens is kept, above it too. 0: no default.
    max_tokens: NonNegInt = 1024
    threads: NonNegInt = 0  # 0: all cores
    # llama.cpp: the threads that evaluate prompts; null: as `threads`. threads: N-1 with threads_batch: N is
    # llama.cpp's split (prompts on every core, generation leaving one to other work; benchmarks/server_load.py)
    threads_batch: NonNegInt | None = None
    startup_timeout_s: PositiveFloat = 300
    vllm_python: str = ".venv-vllm/bin/python"
    # For vLLM's CPU build. Chunked prefill off: vLLM 0.32's CPU engine dies on a seeded request
    # whose prefill is split over steps (`CPU Generator does not use offset`), and the pipeline
    # seeds every call; off, vLLM raises the step's token budget to max_model_len instead.
    vllm_args: list[str] = Field(
        default_factory=lambda: ["--enforce-eager", "--dtype", "bfloat16", "--no-enable-chunked-prefill"]
    )
    model_cache_dir: str = "~/.cache/worldsmith/models"


class EndpointConfig(Strict):
    """One OpenAI-compatible service: one or more replica URLs behind one model name."""

    urls: list[str] = Field(default_factory=lambda: [EMBEDDED], min_length=1)
    model: str = "smollm2-135m"
    api_key: str = "EMPTY"
    api_key_env: str | None = None
    max_concurrency: PositiveInt = 8
    timeout_s: PositiveFloat = 300  # per call; CPU generations of ~600 tokens at 8-way batching take minutes
    balance: Literal["least_busy", "round_robin"] = "least_busy"


class RetryConfig(Strict):
    max_attempts: PositiveInt = 5
    initial_backoff_s: PositiveFloat = 0.5
    max_backoff_s: PositiveFloat = 30
    # a server unreachable this long stops the run (0: count as a failed call)
    outage_timeout_s: Annotated[float, Field(ge=0)] = 180


def on_off(v: Any) -> Any:
    """YAML reads a bare on / off as a boolean (`--set eval.grounding=off` gives false): take it back as the word."""
    return {True: "on", False: "off"}.get(v, v) if isinstance(v, bool) else v


class RoleConfig(Strict):
    endpoint: str = "local"
    model: str | None = None  # defaults to the endpoint's model
    temperature: Temperature = 0.7
    top_p: Probability = 1.0
    max_tokens: PositiveInt = 512
    frequency_penalty: Annotated[float, Field(ge=-2, le=2)] = 0.0  # >0 curbs a small model's loops
    seed: int | None = None
    tool_call_mode: Literal["native", "constrained"] = "constrained"
    # agent, constrained mode: key arguments only among the keys the conversation has shown, record-naming text
    # arguments only among the values it has shown (auto: on when constrained)
    grounding: Annotated[Literal["auto", "on", "off"], BeforeValidator(on_off)] = "auto"

    parallel_tool_calls: bool = True  # agent: several calls in one step (constrained mode: off = at most one)
    # agent, constrained mode: a text reply opens with a capital letter and holds no brace, bracket, angle bracket,
    # quote or line break, in the grammar (vocab.PROSE_REPLY_PATTERN; off: any string up to MAX_REPLY_CHARS). auto:
    # on when worldsmith serves the role with llama.cpp; vLLM 0.32's xgrammar fails to compile the 400-character bound
    prose_replies: Annotated[Literal["auto", "on", "off"], BeforeValidator(on_off)] = "auto"
    # the sampled tokens' log-probabilities, as the engine computed them, kept with each agent message (RL's
    # K2.5 mask compares them with the trainer's)
    logprobs: bool = False
    extra_body: dict[str, Any] = Field(default_factory=dict)

    @property
    def grounded(self) -> bool:
        return self.tool_call_mode == "constrained" and self.grounding != "off"


class RolesConfig(Strict):
    tool_evolver: RoleConfig = RoleConfig(temperature=0.9, top_p=0.95, max_tokens=768, frequency_penalty=0.5)
    task_writer: RoleConfig = RoleConfig(temperature=0.8, top_p=0.95, max_tokens=1024, frequency_penalty=0.5)
    # max_tokens above the reply's 300 characters: SmolLM2 spends a token per digit, and a cut reply is lost
    user_sim: RoleConfig = RoleConfig(temperature=0.7, top_p=0.95, max_tokens=400, frequency_penalty=0.3)
    tool_sim: RoleConfig = RoleConfig(temperature=0.3, top_p=0.95, max_tokens=512, frequency_penalty=0.3)
    # temperature 0.3: SmolLM2's replies to a tool result are not prose 35% of the time at 0.3, 45% at 0.7 (20
    # reply points, README); one call per step: a second call in the same step was a duplicate or a guess
    agent: RoleConfig = RoleConfig(
        temperature=0.3, top_p=0.95, max_tokens=512, frequency_penalty=0.3, parallel_tool_calls=False
    )
    critic: RoleConfig = RoleConfig(temperature=0.0, top_p=1.0, max_tokens=512)


# one list of roles: vocab.ROLES names them, this config gives each its settings
assert tuple(RolesConfig.model_fields) == ROLES, "config.RolesConfig must have one field per vocab.ROLES role"


POLICY_ENDPOINT = "policy"


class PolicyConfig(Strict):
    """An agent policy worldsmith serves itself, apart from the simulators: e.g. the model
    `make finetune` wrote, so the next run generates with it. Only the `agent` role uses it."""

    enabled: bool = False
    model_path: str | None = None  # an HF folder (vllm) or a GGUF (llamacpp); null: the packaged SmolLM2
    engine: Literal["llamacpp", "vllm"] = "vllm"
    model: str = "policy"  # the name the policy server answers to
    port: Annotated[int, Field(ge=1, le=65535, strict=True)] = 8011
    parallel: PositiveInt | None = None  # sequences the policy server runs at once; null: llm.server.parallel


def llamacpp_sizing_problem(key: str, ctx_size: int, parallel: int) -> str | None:
    """Why `parallel` llama.cpp sequences cannot share a `ctx_size`-token context, or None."""
    if ctx_size // parallel >= LLAMACPP_MIN_TOKENS_PER_SEQUENCE:
        return None
    return (
        f"{key}: got {parallel}, but {parallel} sequences would divide llama.cpp's {ctx_size}-token context "
        f"({ctx_size // parallel} tokens each); expected at most {ctx_size // LLAMACPP_MIN_TOKENS_PER_SEQUENCE} "
        f"(each needs {LLAMACPP_MIN_TOKENS_PER_SEQUENCE}), or raise llm.server.ctx_size to "
        f"{parallel * LLAMACPP_MIN_TOKENS_PER_SEQUENCE}"
    )


class LLMConfig(Strict):
    server: ServerConfig = ServerConfig()
    endpoints: dict[str, EndpointConfig] = Field(default_factory=lambda: {"local": EndpointConfig()})
    retry: RetryConfig = RetryConfig()
    roles: RolesConfig = RolesConfig()
    policy: PolicyConfig = PolicyConfig()

    @model_validator(mode="after")
    def _policy_port_is_its_own(self) -> LLMConfig:
        if self.policy.enabled and self.policy.port == self.server.port:
            raise ValueError(
                f"llm.policy.port: got {self.policy.port}, expected a port other than llm.server.port "
                "(both servers run at once)"
            )
        if self.policy.enabled and POLICY_ENDPOINT in self.endpoints:
            raise ValueError(
                f"llm.endpoints.{POLICY_ENDPOINT}: the name is taken by llm.policy when it is enabled; "
                "rename the endpoint"
            )
        return self

    def used_endpoints(self) -> set[str]:
        """The endpoints some role talks to (not the agent's when llm.policy serves it)."""
        return {getattr(self.roles, r).endpoint for r in ROLES if not (r == "agent" and self.policy.enabled)}

    def uses_embedded(self) -> bool:
        """Some role talks to the embedded server, so worldsmith starts it."""
        return any(EMBEDDED in self.endpoints[name].urls for name in self.used_endpoints())

    def model_for(self, role: str) -> str:
        """The model name a role's calls carry (the policy's for the agent when llm.policy is on)."""
        if role == "agent" and self.policy.enabled:
            return self.policy.model
        rc = getattr(self.roles, role)
        return rc.model or self.endpoints[rc.endpoint].model

    def policy_server(self) -> ServerConfig:
        """The server settings for llm.policy: the main server's, with the policy's model, engine, port
        and (when set) sequence count."""
        p = self.policy
        return self.server.model_copy(
            update={
                "engine": p.engine,
                "model_path": p.model_path,
                "model": p.model,
                "port": p.port,
                "parallel": p.parallel or self.server.parallel,
            }
        )

    @model_validator(mode="after")
    def _roles_name_known_endpoints(self) -> LLMConfig:
        for role in ROLES:
            name = getattr(self.roles, role).endpoint
            if name not in self.endpoints:
                raise ValueError(
                    f"llm.roles.{role}.endpoint: got {name!r}, expected one of the names "
                    f"under llm.endpoints ({', '.join(sorted(self.endpoints)) or 'none defined'})"
                )
        return self

    def serving_engine(self, role: str) -> str | None:
        """The engine of the server worldsmith starts for `role` (llm.policy's for the agent when it is on, the
        embedded server's for an `embedded` endpoint); None for an outside endpoint."""
        if role == "agent" and self.policy.enabled:
            return self.policy.engine
        return self.server.engine if EMBEDDED in self.endpoints[getattr(self.roles, role).endpoint].urls else None

    def prose_replies(self, role: str) -> bool:
        """Whether `role`'s constrained replies carry the prose pattern (auto: when llama.cpp serves it)."""
        mode = getattr(self.roles, role).prose_replies
        return mode == "on" or (mode == "auto" and self.serving_engine(role) == "llamacpp")

    @model_validator(mode="after")
    def _prose_replies_not_on_vllm(self) -> LLMConfig:
        if self.roles.agent.prose_replies == "on" and self.serving_engine("agent") == "vllm":
            key = "llm.policy.engine" if self.policy.enabled else "llm.server.engine"
            raise ValueError(
                f"llm.roles.agent.prose_replies: on, expected auto or off with {key} vllm (vLLM 0.32's xgrammar fails "
                "to compile the prose pattern's length bound, and its server stops)"
            )
        return self

    @model_validator(mode="after")
    def _llamacpp_sequences_fit(self) -> LLMConfig:
        main = self.server
        if (
            self.uses_embedded()
            and main.engine == "llamacpp"
            and (problem := llamacpp_sizing_problem("llm.server.parallel", main.ctx_size, main.parallel))
        ):
            raise ValueError(problem)
        policy = self.policy_server()
        if self.policy.enabled and policy.engine == "llamacpp":
            key = "llm.policy.parallel" if self.policy.parallel else "llm.server.parallel (the policy server's too)"
            if problem := llamacpp_sizing_problem(key, policy.ctx_size, policy.parallel):
                raise ValueError(problem)
        return self


class SmokeConfig(Strict):
    """The smoke stage: one structured record and one tool call, to prove the wiring."""

    enabled: bool = True
    requests: PositiveInt = 4


EVOLUTION_OPERATORS = ("add_constraint", "add_parameter", "specialize", "generalize", "compose", "add_error_modes")


class WorldsConfig(Strict):
    """Domains per taxonomy category, and a world schema per domain (collections, keys,
    references, enums with transitions, rules) designed by the LLM or derived by code."""

    enabled: bool = True
    taxonomy_file: str = "tool_specs/taxonomy.yaml"
    categories: NonNegInt = 2  # taxonomy categories used (0 = all), taken in file order; a GPU run: 0
    domains_per_category: PositiveInt = 2
    design: Literal["llm", "derived"] = "llm"  # llm: designed, validated, derived when invalid; derived: code only
    packs_dir: str = "worlds"  # domain packs, one folder each (docs/packs.md)
    # the packs whose worlds the run uses: [all] | [] | names of folders in packs_dir
    packs: list[str] = Field(default_factory=lambda: ["all"])
    # worlds inferred by code from the crawled servers' tools (tools.snapshot_dir), kept with at least
    # crawled_min_tools bound tools; 0 = none
    crawled_min_tools: NonNegInt = 3
    # the worlds' fixed "now": dates are drawn around it, so worlds replay
    today: datetime.date = datetime.date(2026, 3, 2)


class EvolveConfig(Strict):
    """Synthetic tools designed against each world (an action on a collection, parameters bound
    to fields), then WizardLM-style evolution operators that keep or change the binding."""

    enabled: bool = True
    # who names and describes a bound tool (its behaviour is the binding's either way)
    naming: Literal["llm", "code"] = "code"
    tools_per_domain: PositiveInt = 3
    evolutions_per_tool: NonNegInt = 1
    operators: list[Literal[EVOLUTION_OPERATORS]] = Field(
        default_factory=lambda: list(EVOLUTION_OPERATORS), min_length=1
    )  # type: ignore[valid-type]


class BundleConfig(Strict):
    """Tool bundles sampled from the tool graph: the seeds of agents."""

    enabled: bool = True
    count: PositiveInt = 8
    size_min: PositiveInt = 2
    size_max: PositiveInt = 3
    # share of bundles drawn on a world inferred from a crawled MCP server: real MCP tool schemas, run by code
    crawled_share: Probability = 0.25
    # share of a bundle's tools that are crawled tools code cannot run (no binding), where the graph allows: the
    # LLM tool simulator plays them, which a 135M model fails (the CPU default: 0; a GPU run: 0.5)
    real_ratio: Probability = 0.0
    distractors: NonNegInt = 1  # tools from other domains added to each bundle
    # where distractors come from: evolved (another world's tools: small schemas, never callable under
    # grounding, as no key of theirs is shown) | mcp (crawled: large schemas, llama.cpp's grammar sampling ~6x slower)
    distractor_sources: list[Literal["mcp", "evolved", "seed"]] = Field(
        default_factory=lambda: ["evolved"], min_length=1
    )
    walk_restart: Probability = 0.15  # random-walk restart probability

    @model_validator(mode="after")
    def _sizes(self) -> BundleConfig:
        if self.size_min > self.size_max:
            raise ValueError(f"bundles.size_min: got {self.size_min}, expected at most size_max ({self.size_max})")
        return self


class ToolsConfig(Strict):
    enabled: bool = True
    snapshot_dir: str = "tool_specs/crawled"  # committed crawl snapshot (make crawl refreshes it)
    servers_file: str = "tool_specs/servers.yaml"
    max_real_tools: NonNegInt = 0  # 0 = every tool of the snapshot
    max_spec_bytes: PositiveInt = 16384
    near_duplicate_threshold: Probability = 0.8  # MinHash Jaccard over name+description shingles
    evolve: EvolveConfig = EvolveConfig()


class AgentsConfig(Strict):
    """One agent (system prompt + tools) per bundle; styles and strictness sampled so agents differ."""

    enabled: bool = True
    styles: list[str] = Field(
        default_factory=lambda: ["concise and formal", "warm and friendly", "terse expert", "patient and explanatory"],
        min_length=1,
    )
    strictness: list[Literal["lenient", "standard", "strict"]] = Field(
        default_factory=lambda: ["lenient", "standard", "strict"], min_length=1
    )
    # who writes the role sentence and guidelines (the rules are the world's either way)
    voice: Literal["llm", "template"] = "llm"


class TasksConfig(Strict):
    enabled: bool = True
    mode: Literal["blueprint", "freeform"] = "blueprint"  # blueprint: gold calls executed first, rubric from execution
    per_agent: PositiveInt = 6  # tasks per agent; difficulties are taken in turn
    # the CPU default: every family the worlds allow, spaced so any 6 in turn hold one irrelevance, one already_done,
    # one dependent chain, one refusal or multi_call and two single calls (README: pass rate by family); a GPU run:
    # list(DIFFICULTIES)
    difficulties: list[Literal[DIFFICULTIES]] = Field(  # type: ignore[valid-type]
        default_factory=lambda: [
            "single_call",
            "irrelevance",
            "dependent_calls",
            "single_call",
            "already_done",
            "refusal",
            "single_call",
            "irrelevance",
            "dependent_calls",
            "error_recovery",
            "already_done",
            "multi_call",
        ],
        min_length=1,
    )
    max_state_bytes: PositiveInt = 8192
    # seeded, min and max
    world_records: Annotated[tuple[PositiveInt, PositiveInt], Field(description="records per collection")] = (3, 5)
    # seeds tried before a difficulty that finds no valid chain is given up (recorded)
    blueprint_attempts: PositiveInt = 3
    # requests the model writes per task (0: the request grammar only); the first that passes the check is kept
    request_attempts: NonNegInt = 0
    # when none passes: the request grammar (prompts/user_request.yaml), then the plain request of
    # prompts/user_request.jinja (each recorded as such); false: a task whose requests all failed is refused
    template_fallback: bool = True


class _FaultRatesBase(Strict):
    """Per tool call, one rate per kind of `vocab.FAULTS`. Network faults hit only open-world
    tools; data faults only read-only ones; edge cases any simulated tool."""

    @model_validator(mode="after")
    def _sum(self) -> _FaultRatesBase:
        total = sum(self.model_dump().values())
        if total > 1:
            raise ValueError(f"rollouts.faults.rates: got rates summing to {total:g}, expected at most 1")
        return self


# its keys are the registry's kinds: a rate for an unknown kind is an error, a new kind gets a key
FaultRates = create_model(
    "FaultRates", __base__=_FaultRatesBase, **{k: (Probability, f.default_rate) for k, f in FAULTS.items()}
)


class FaultsConfig(Strict):
    enabled: bool = True
    rates: FaultRates = FaultRates()
    # error_recovery tasks: the first tool call fails (transient_error), even with enabled: false
    force_on_error_recovery: bool = True


class ToolSimConfig(Strict):
    max_attempts: PositiveInt = 3  # a reply whose patch does not apply (or breaks a schema) is asked again
    max_state_chars: PositiveInt = 6000  # larger states: the simulator sees the collections the call concerns
    max_state_bytes: PositiveInt = 65536  # a patch that grows the state past this is refused
    constrain_paths: bool = True  # patch paths limited (by the grammar) to pointers that exist in the state


class RealExecutionConfig(Strict):
    """Crawled servers whose tools are executed for real through MCP instead of simulated."""

    enabled: bool = True
    servers: list[str] = Field(default_factory=lambda: ["time"])  # each must be safe_to_execute in servers.yaml
    timeout_s: PositiveFloat = 30


class RolloutsConfig(Strict):
    """Simulated multi-turn episodes: agent policy <-> user simulator, agent <-> tool simulator."""

    enabled: bool = True
    samples_per_task: PositiveInt = 3  # trajectories per task, each with its own seed (pass^k)
    concurrency: PositiveInt = 8  # episodes in flight (the endpoints' own limits still apply)
    adaptive_concurrency: bool = True  # AIMD: halve on timeouts/5xx, grow by one on success
    max_turns: PositiveInt = 2  # user messages that ask for more (a user told its goal is met still closes: stop)
    max_tool_calls: PositiveInt = 6
    max_agent_steps_per_turn: PositiveInt = 4  # assistant messages between two user messages
    max_tokens: PositiveInt = 4000  # generated tokens per episode, all roles together
    # force a call on the first assistant step of tool tasks
    require_tool: Literal["first_turn", "never"] = "first_turn"
    # blueprint tasks always open with their checked request
    first_user_message: Literal["simulate", "goal_request"] = "simulate"
    # blueprint tasks: once every checkable criterion holds, the user simulator is told and ends
    user_knows_goal: bool = True
    # a user simulator reply that is not valid (a small model's runaway string) is asked again with another
    # seed; the simulator is not the policy being judged, and only the valid reply enters the episode
    user_sim_attempts: PositiveInt = 2
    # an agent step whose reply to the user is not prose (worldsmith.prose: JSON fragments, markup, a loop) or whose
    # output cannot be parsed (a runaway) is sampled again with another seed, up to this many samples in all; the
    # judge still reads what is kept, the trajectory counts the resamples and the dataset card reports them. Eval
    # always plays one sample (the model as it is).
    reply_attempts: PositiveInt = 3
    # a text reply right after a tool result that succeeded, quoting none of that result's values ("Done.", a
    # date the result never had), is sampled again like one that is not prose (within reply_attempts)
    reply_uses_result: bool = True
    # a text reply the judge's checks of what a reply says would reject (worldsmith.judge.hacks: a value, name or event
    # nothing before it shows, a value given as another field's, a claim no call backs, tool talk) is sampled again
    # like one that is not prose (within reply_attempts): rejection sampling per reply, by the judge's own checks,
    # which still read the episode in full afterwards. Eval always plays one sample.
    reply_passes_checks: bool = True
    # grounded decoding: a text reply right after a successful result, while the user asked a field of a record
    # that a result named (its key shown) but none has shown (follow a reference: the booking read, the flight's
    # destination asked), is sampled again as a call, the grammar narrowed to the get tools of that record
    read_before_reply: bool = True
    # grounded decoding with prose replies: a text reply right after a successful result whose fields the user's
    # messages name ("the name for section sct-3203") must say one of those fields' values there, in the grammar
    # (grounding.asked_values); right after a change code ran, one of the call's own arguments (confirming_values):
    # SmolLM2 answered crawled look-ups with links and numbers it made up, confirmed ord-2003 as "order-2003"
    reply_quotes_asked: bool = True
    # grounded decoding: every agent step is offered the tools whose record or action the user's messages name,
    # when they name any (grounding.named_tools): SmolLM2 often picked a crawled bundle's other tool, and with the
    # record it was asked about read, read a record it referenced and answered about that
    tools_the_user_named: bool = True
    # grounded decoding, led by the task's executed gold (as `require_tool` is): a task whose gold changes nothing
    # (a look-up, a refusal, an already-done request) is offered read tools only, so the agent looks before it
    # answers instead of sending the change for the world to refuse; an irrelevance task (no tool does what the user
    # asks) is offered no tool, and its reply must say it cannot (the judge's decline words, `vocab.DECLINE_OPENINGS`).
    # SmolLM2 called a get on 22 of 24 irrelevance episodes and declined in none. A capable policy: false
    restraint_decoding: bool = True
    tool_sim: ToolSimConfig = ToolSimConfig()
    faults: FaultsConfig = FaultsConfig()
    real_execution: RealExecutionConfig = RealExecutionConfig()


class RewardConfig(Strict):
    """The episode's reward for RL, from the judge's verdict by component (each kept with the verdict):
    `total` = the weighted sum. Components: verifiable (1 when every deterministic check holds: criteria,
    status, no rejected hack, faults handled), verifiable_fraction (share of deterministic criteria passed),
    rubric (the critic's score / 10; absent without the critic), format (share of calls that parsed into a
    known tool with valid arguments) and budget (0 within the task's token budget, down to -1 at twice it)."""

    verifiable: float = 1.0
    verifiable_fraction: float = 0.0
    rubric: float = 0.0  # the CPU default has no critic (SmolLM2's agreed at kappa 0.0); a GPU run: 0.5
    format: float = 0.1
    budget: float = 0.1
    # the task's token budget: this many agent tokens per step of its gold chain, plus one step for the reply
    tokens_per_step: PositiveInt = 256
    # once the critic is calibrated (`worldsmith judge calibrate`): the rubric reward only for difficulties where its
    # pairwise preferences agree with the verifiable reward at this Cohen's kappa or above; null = no refusal
    rubric_min_kappa: Annotated[float, Field(ge=-1, le=1)] | None = 0.4
    # judged pairs a difficulty needs before its kappa counts: one lucky pair scores 1.0 (below it: refused)
    rubric_min_pairs: PositiveInt = 10


class JudgeConfig(Strict):
    """Keep a trajectory when all of these hold (the policy)."""

    enabled: bool = True
    # the LLM critic (judge criteria, K2 rubrics, score); off in the CPU default: SmolLM2 as critic agreed with the
    # deterministic checks at kappa 0.0 (it passed everything, README), so it must not decide what is kept
    critic: bool = False
    statuses: list[Literal["finished", EndedByLimit]] = Field(default_factory=lambda: ["finished"], min_length=1)
    require_deterministic: bool = True  # every state / call / answer criterion passes
    # repeated_refused_call is found and recorded, not rejected: the two labellers of the judge set disagree on it;
    # unverifiable_claim is the `unverifiable` policy's to decide
    reject_hacks: list[HackKind] = Field(
        default_factory=lambda: [h for h in HACK_KINDS if h not in ("repeated_refused_call", "unverifiable_claim")]
    )
    # a claim of a reply that nothing before it supports or contradicts: strict drops the episode (small policies:
    # the packaged default), critic asks the critic about those sentences only, lenient keeps it and counts it on
    # the dataset card (capable policies); a contradicted claim always drops it
    unverifiable: UnverifiablePolicy = "strict"
    min_critic_score: Annotated[int, Field(ge=0, le=10)] = 6  # 0: the score does not matter
    # the task's `judge` criteria pass: by the critic, or with the critic off by their deterministic form (a refusal
    # or irrelevance: the reply declines; the guards hold the end state); one with no such form is then dropped
    require_judge_criteria: bool = True
    require_critic_rubrics: bool = True  # K2's core and prescriptive rubrics pass by the critic
    require_fault_recovery: bool = True  # after an injected fault the agent retried or told the user
    concurrency: PositiveInt = 8
    reward: RewardConfig = Field(default_factory=RewardConfig)  # RL's reward by component; not part of the policy


# The export's file formats by name: export/formats.py registers a class under each, in this order
# (tests/test_export.py checks they agree). The config sits below the export stage, so it names them
# instead of importing the registry. jsonl is what finetune and eval read, so every export writes it.
EXPORT_FORMATS: tuple[str, ...] = ("parquet", "jsonl", "openai", "sharegpt")
TRAINING_FORMAT = "jsonl"


class ExportConfig(Strict):
    """The SFT dataset made of the trajectories the judge kept."""

    enabled: bool = True
    out_dir: str = "data/exports"  # <out_dir>/<run_id>/: a folder per format, README.md (dataset card)
    # names in EXPORT_FORMATS; jsonl is required (finetune and eval read it), so it is checked below
    formats: list[str] = Field(default_factory=lambda: ["parquet", "jsonl", "openai"], min_length=1)
    # world: the validation split holds out whole worlds (none of their episodes in train; eval plays them);
    # agent: it holds out agents (a world may be in both splits)
    split_by: Literal["world", "agent"] = "world"
    validation_fraction: Probability = 0.1  # share of worlds (or agents), not examples, held out
    # split_by world: also hold out at least one world of each of these sources (pack, crawled, derived, llm) that
    # the run has two or more worlds of, so an eval reads every kind of world; empty: the fraction alone decides
    held_out_sources: list[Literal["pack", "crawled", "derived", "llm"]] = Field(default_factory=list)
    near_duplicate_threshold: Probability = 0.9  # MinHash Jaccard of the conversation text; 1.0 keeps near copies
    max_per_tool: NonNegInt = 0  # 0 = no cap; else at most this many examples that call one tool
    max_per_domain: NonNegInt = 0
    # best: one example per task, the best the judge kept (critic score, then fewest unverifiable claims, fewest
    # calls, shortest), so the export counts distinct tasks; all: every kept sample (preference / RL data)
    per_task: Literal["best", "all"] = "best"
    licence_note: str = (
        "Tool specs crawled from public MCP servers keep their authors' licences (see tool_specs/servers.yaml for "
        "the packages); check them before redistributing."
    )

    @model_validator(mode="after")
    def _formats_known(self) -> ExportConfig:
        seen: set[str] = set()
        for i, name in enumerate(self.formats):
            if name not in EXPORT_FORMATS:
                known = ", ".join(map(_show, EXPORT_FORMATS))
                raise ValueError(f"export.formats.{i}: got {_show(name)}, expected one of {known}")
            if name in seen:
                raise ValueError(f"export.formats.{i}: got {_show(name)} a second time, expected each format once")
            seen.add(name)
        if TRAINING_FORMAT not in seen:
            read = export_jsonl(Path("<export>"), "<split>").as_posix()
            raise ValueError(
                f"export.formats: got {_show(self.formats)}, expected a list that includes "
                f"{_show(TRAINING_FORMAT)} (finetune and eval read {read})"
            )
        return self


class ReportConfig(Strict):
    enabled: bool = True


class FinetuneConfig(Strict):
    """SFT on an exported dataset: Muon for the block matrices + AdamW for the rest (or all AdamW)."""

    base_model: str | None = None  # an HF model folder; null: SmolLM2-135M-Instruct read from the packaged GGUF
    dataset: str | None = None  # an export folder; null: the export of this config's run (data/exports/<run_id>)
    out_dir: str = "data/models"  # <out_dir>/<name>/: checkpoints/ and model/ (an HF folder vLLM serves)
    name: str | None = None  # default: <run_id>-<optimizer>
    optimizer: Literal["muon", "adamw"] = "muon"
    lr: PositiveFloat = 5e-5  # the AdamW groups (embeddings, head, norms; everything with optimizer: adamw)
    muon_lr: PositiveFloat = 2e-4  # Muon's own learning rate (with Moonlight's match_rms_adamw scaling)
    weight_decay: Annotated[float, Field(ge=0)] = 0.0
    batch_size: PositiveInt = 4
    grad_accum: PositiveInt = 1
    max_steps: PositiveInt = 10
    warmup_steps: NonNegInt = 2
    max_length: PositiveInt = 2048  # tokens per example (longer ones are cut); with packing, tokens per row
    # several examples per row (block-causal attention, positions restart): less padding; else length-bucketed
    packing: bool = False
    clip_grad_norm: PositiveFloat = 1.0
    eval_every: PositiveInt = 5
    save_every: PositiveInt = 5
    ns_dtype: Literal["auto", "float32", "bfloat16"] = "auto"  # Newton-Schulz: auto = bf16 on CUDA, fp32 on CPU
    # stop when the loss exceeds this multiple of the first loss (or is not finite)
    explode_factor: PositiveFloat = 10.0
    # K2's MuonClip: heads whose max attention logit passes this are scaled back (K2: 100); null = off
    qk_clip_tau: PositiveFloat | None = None
    # recompute each layer's activations in the backward pass instead of keeping them: auto = on when the
    # longest micro-batch's activations would outweigh the weights, gradients and optimizer state
    gradient_checkpointing: Literal["auto", "on", "off"] = "auto"
    seed: NonNegInt = 0


class RLConfig(Strict):
    """`worldsmith rl` / `make rl`: policy optimisation on the run's training tasks (Kimi k1.5's objective): per
    iteration the policy is served, plays `samples_per_task` episodes of each chosen task, the judge's reward
    (`judge.reward.total`) of each is centred on its task's mean, and the policy is updated with
    (r - mean r - tau * log(pi / pi_old))^2, pi_old being the weights that played the episodes (the next
    iteration's reference). Held-out tasks are played before and after."""

    policy: str | None = None  # an HF folder to start from; null: this config's `make finetune` output, else the base
    out_dir: str = "data/models"  # <out_dir>/<name>/: model/ (an HF folder), checkpoints/, rl.json, rl.html
    name: str | None = None  # default: <run_id>-rl
    iterations: PositiveInt = 2
    tasks_per_iteration: PositiveInt = 6
    samples_per_task: Annotated[int, Field(ge=2)] = 4  # k: the reward is centred on the mean of a task's k samples
    # the policy's tool-call mode: native samples are the trained tokens themselves (on-policy); constrained ones are
    # JSON turned into calls (what a base SmolLM2 needs: it makes no native call). auto: native from a fine-tuned
    # policy (rl.policy or `make finetune`'s), constrained from the base model
    mode: Literal["auto", "constrained", "native"] = "auto"
    tau: PositiveFloat = 0.1  # the relative-entropy weight to the iteration's reference policy
    optimizer: Literal["muon", "adamw"] = "muon"
    lr: PositiveFloat = 1e-5  # AdamW groups
    muon_lr: PositiveFloat = 5e-5
    updates_per_iteration: PositiveInt = 2  # optimizer steps over the iteration's episodes (shuffled mini-batches)
    batch_size: PositiveInt = 4  # episodes per optimizer step
    max_length: PositiveInt = 2048  # tokens per episode (longer ones are cut)
    clip_grad_norm: PositiveFloat = 1.0
    # K2.5: tokens whose log-probability under the weights being trained left the one under the weights that
    # sampled them by more than this are masked out of the loss; null = off
    logratio_mask: PositiveFloat | None = 1.0
    # agent tokens the engine did not sample in the form they are trained on (a tool call the chat template renders
    # from the parsed call, where the engine sampled other text; a turn redone constrained): drop leaves them out of
    # the loss (on-policy, as K2.5 keeps the loss to sampled tokens) | keep trains on them with the reference's
    # log-probability in place of the engine's. An episode that recorded no engine log-probabilities keeps them all.
    unsampled: Literal["drop", "keep"] = "drop"
    temperature: tuple[PositiveFloat, PositiveFloat] = (1.0, 0.7)  # sampling temperature, first -> last iteration
    # pass@k = 0 curriculum (Kimi-Dev): a task none of whose k samples earned the verifiable reward is set aside,
    # and tried again every this many iterations; 0 = never set aside
    retry_every: NonNegInt = 2
    eval_samples: PositiveInt = 2  # per held-out task, before and after
    eval_tasks: NonNegInt = 8  # held-out tasks played before and after (0 = all)
    gradient_checkpointing: Literal["auto", "on", "off"] = "auto"
    seed: NonNegInt = 0


class EvalConfig(Strict):
    """`worldsmith eval --model PATH`: the tasks of the export's held-out worlds (or agents), played by each
    model under test with the same seeds."""

    samples_per_task: PositiveInt = 4  # k of pass^k
    max_tasks: NonNegInt = 0  # 0 = every held-out task
    # serves the models under test (llamacpp: an HF folder is converted to GGUF once)
    engine: Literal["llamacpp", "vllm"] = "llamacpp"
    port: Annotated[int, Field(ge=1, le=65535, strict=True)] = 8011
    # Sequences that server runs at once: its own, not llm.server.parallel, which sizes the simulators'
    # server (and may be 32 on vLLM, far past what llama.cpp's context holds for each).
    parallel: PositiveInt = 8
    compare_base: bool = True  # also evaluate finetune.base_model (or the packaged SmolLM2) on the same tasks
    # tool-call modes played
    modes: list[Literal["constrained", "native"]] = Field(
        default_factory=lambda: ["constrained", "native"], min_length=1
    )
    # off: the model under test picks its own arguments (grounding helps make data, not measure)
    grounding: Annotated[Literal["off", "on"], BeforeValidator(on_off)] = "off"
    # llamacpp: the packaged base (a 4-bit GGUF) is de-quantised and served through the same f16 conversion as the
    # tuned models, so the models compare at equal precision; false: the 4-bit GGUF as packaged
    equal_precision: bool = True


class CrawlConfig(Strict):
    concurrency: PositiveInt = 3
    timeout_s: PositiveFloat = 60
    cache_dir: str = "~/.cache/worldsmith/mcp-venvs"


class CodingConfig(Strict):
    """Coding worlds (issue 52; docs/coding.md): real repositories (`repos_file`), BugFixer tasks made by
    execution in the sandbox, and coding episodes played by the rollouts with real tool calls in it. Off by
    default: `--set coding.enabled=true` adds the slice to a run."""

    enabled: bool = False
    repos_file: str = "worlds/repos.yaml"
    cache_dir: str = "data/coding"  # sdists, pristine trees, sandbox folders (relative to the project root)
    repos: list[str] = Field(default_factory=list)  # names of repos_file to use (empty: every one)
    tasks_per_repo: int = Field(3, ge=0)
    testwriter_per_repo: int = Field(1, ge=0)  # TestWriter tasks made from the verified bug tasks, per repository
    # who writes a bug task's report: the grammar (prompts/bug_report.yaml), or the task_writer model, checked (it may
    # not quote the changed code or name the changed file, and must name a failing test or function; else the grammar)
    statement: Literal["grammar", "llm"] = "grammar"
    max_tries: int = Field(30, ge=1)  # mutations tried per repository at most
    parallel: int = Field(2, ge=1)  # sandboxes at once
    backend: Literal["auto", "bwrap", "unshare"] = "auto"
    episodes: int = Field(4, ge=0)  # coding tasks the rollouts play (each samples_per_task times)
    max_tool_calls: int = Field(16, ge=1)  # per coding episode


class PipelineConfig(Strict):
    run: RunConfig = RunConfig()
    llm: LLMConfig = LLMConfig()
    smoke: SmokeConfig = SmokeConfig()
    worlds: WorldsConfig = WorldsConfig()
    crawl: CrawlConfig = CrawlConfig()
    tools: ToolsConfig = ToolsConfig()
    bundles: BundleConfig = BundleConfig()
    agents: AgentsConfig = AgentsConfig()
    tasks: TasksConfig = TasksConfig()
    rollouts: RolloutsConfig = RolloutsConfig()
    judge: JudgeConfig = JudgeConfig()
    export: ExportConfig = ExportConfig()
    report: ReportConfig = ReportConfig()
    finetune: FinetuneConfig = FinetuneConfig()
    eval: EvalConfig = EvalConfig()
    rl: RLConfig = RLConfig()
    coding: CodingConfig = CodingConfig()

    @model_validator(mode="after")
    def _eval_sequences_fit(self) -> PipelineConfig:
        if self.eval.engine == "llamacpp" and (
            problem := llamacpp_sizing_problem("eval.parallel", self.llm.server.ctx_size, self.eval.parallel)
        ):
            raise ValueError(problem)
        return self

    def resolved(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def default_run_id(self) -> str:
        """`<run.name>-<config hash>`: the same config resumes the same run."""
        return f"{self.run.name}-{self.config_hash()}"

    def config_hash(self) -> str:
        """Hash of what makes a run's data: not the sections that only read it (finetune, eval, rl),
        so `--set finetune.max_steps=1` still finds the run's export, nor where shards execute."""
        data = {k: v for k, v in self.resolved().items() if k not in ("finetune", "eval", "rl")}
        data["run"] = {k: v for k, v in data["run"].items() if k not in EXECUTION_KEYS}
        # the RL reward's weights came after runs were made: hashed only when changed, so those runs keep their ids
        if data["judge"].get("reward") == RewardConfig().model_dump(mode="json"):
            del data["judge"]["reward"]
        # the coding slice came after runs were made: hashed only when changed, so those runs keep their ids
        if data.get("coding") == CodingConfig().model_dump(mode="json"):
            del data["coding"]
        for *parents, key in NULL_NEUTRAL_KEYS:
            section = data
            for name in parents:
                section = section[name]
            if section.get(key, 0) is None:
                del section[key]
        for *parents, key in SERVING_KEYS:
            section = data
            for name in parents:
                section = section[name]
            section.pop(key, None)
        # bundles was tools.bundles, without `enabled`, when runs were made: hashed there (and its `enabled`
        # left out while true, the behaviour before it existed), so those runs keep their ids
        bundles = data.pop("bundles")
        if bundles["enabled"] is True:
            del bundles["enabled"]
        data["tools"]["bundles"] = bundles
        canonical = json.dumps(data, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:12]


def resolve_path(root: Path, value: str | os.PathLike) -> Path:
    """A config path: absolute as given, else relative to the project root (the config's folder)."""
    p = Path(value).expanduser()
    return p if p.is_absolute() else root / p


def data_dir(cfg: PipelineConfig, root: Path) -> Path:
    return resolve_path(root, cfg.run.data_dir)


class ConfigError(ValueError):
    """A configuration problem; `problems` holds one human line per bad key."""

    def __init__(self, source: str, problems: list[str]):
        self.source = source
        self.problems = problems
        super().__init__(f"invalid configuration in {source}:\n" + "\n".join(f"  - {p}" for p in problems))


# ---------------------------------------------------------------------------- loading


def load_config(
    path: str | os.PathLike | None = None, overrides: list[str] | None = None
) -> tuple[PipelineConfig, Path]:
    """Load, override and validate the config; returns it with the project root (the file's folder)."""
    cfg_path = Path(path or os.environ.get(ENV_CONFIG) or DEFAULT_CONFIG).expanduser()
    if not cfg_path.exists():
        raise ConfigError(str(cfg_path), [f"file not found: {cfg_path.resolve()}"])
    try:
        raw = yaml.safe_load(cfg_path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(str(cfg_path), [f"not valid YAML: {exc}"]) from None
    if not isinstance(raw, dict):
        raise ConfigError(str(cfg_path), [f"top level: got {type(raw).__name__}, expected a mapping of sections"])
    raw = apply_overrides(raw, overrides or [], source=str(cfg_path))
    return validate_config(raw, source=str(cfg_path)), cfg_path.resolve().parent


def validate_config(raw: dict[str, Any], source: str = "<config>") -> PipelineConfig:
    try:
        return PipelineConfig.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(source, [_describe_error(e) for e in exc.errors()]) from None


def apply_overrides(raw: dict[str, Any], overrides: list[str], source: str = "<config>") -> dict[str, Any]:
    """Apply `a.b.c=value` overrides; the value is parsed as YAML (`3`, `true`, `[a, b]`)."""
    raw = copy.deepcopy(raw)  # YAML data: plain values, dates included
    problems = []
    for item in overrides:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            problems.append(f"--set {item!r}: expected KEY.PATH=VALUE")
            continue
        try:
            value = yaml.safe_load(text) if text.strip() else ""
        except yaml.YAMLError:
            value = text
        node = raw
        parts = key.strip().split(".")
        for part in parts[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {} if child is None else child
            if not isinstance(child, dict):
                problems.append(f"--set {key}: {part!r} holds a {type(child).__name__}, not a section")
                break
            node = child
        else:
            node[parts[-1]] = value
    if problems:
        raise ConfigError(source, problems)
    return raw


# ------------------------------------------------------------------ error messages


def _describe_error(err: dict[str, Any]) -> str:
    loc = [str(p) for p in err.get("loc", ())]
    path = ".".join(loc) or "(top level)"
    value = err.get("input")
    kind = err.get("type", "")
    if kind == "extra_forbidden":
        known = _known_keys(PipelineConfig, loc[:-1])
        hint = f"; known keys here: {', '.join(known)}" if known else ""
        return f"{path}: unknown key{hint}"
    if kind == "missing":
        return f"{path}: missing, expected {_expected(PipelineConfig, loc) or 'a value'}"
    if kind == "value_error":
        msg = str(err.get("msg", "")).removeprefix("Value error, ")
        return msg if ":" in msg.split(" ")[0] else f"{path}: {msg}"
    expected = _expected(PipelineConfig, loc) or err.get("msg", "a valid value")
    return f"{path}: got {_show(value)}, expected {expected}"


def _show(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value)
    text = json.dumps(value, default=str)
    return text if len(text) < 80 else text[:77] + "..."


def _field_for(model: type[BaseModel], loc: list[str]):
    """Walk `loc` through the model tree; returns (annotation, metadata) of the last field."""
    annotation: Any = model
    metadata: list[Any] = []
    for part in loc:
        annotation = _unwrap_optional(annotation)
        origin = typing.get_origin(annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            field = annotation.model_fields.get(part)
            if field is None:
                return None, []
            annotation, metadata = field.annotation, list(field.metadata)
        elif origin is dict:
            annotation, metadata = typing.get_args(annotation)[1], []
        elif origin is list:
            annotation, metadata = typing.get_args(annotation)[0], []
        else:
            return None, []
        if typing.get_origin(annotation) is Annotated:
            base, *extra = typing.get_args(annotation)
            annotation = base
            for item in extra:
                metadata.extend(getattr(item, "metadata", [item]))
    return annotation, metadata


def _unwrap_optional(annotation: Any) -> Any:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def _known_keys(model: type[BaseModel], loc: list[str]) -> list[str]:
    annotation, _ = _field_for(model, loc) if loc else (model, [])
    annotation = _unwrap_optional(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return list(annotation.model_fields)
    return []


def _expected(model: type[BaseModel], loc: list[str]) -> str | None:
    annotation, metadata = _field_for(model, loc)
    if annotation is None:
        return None
    optional = typing.get_origin(annotation) in (typing.Union, types.UnionType)
    annotation = _unwrap_optional(annotation)
    bounds = {}
    for m in metadata:
        for name in ("ge", "gt", "le", "lt", "min_length"):
            if getattr(m, name, None) is not None and isinstance(m, annotated_types.BaseMetadata):
                bounds[name] = getattr(m, name)
    origin = typing.get_origin(annotation)
    if origin is Literal:
        return "one of " + ", ".join(json.dumps(a) for a in typing.get_args(annotation))
    if annotation is bool:
        return "true or false"
    if annotation in (int, float):
        noun = "an integer" if annotation is int else "a number"
        low = bounds.get("ge", bounds.get("gt"))
        high = bounds.get("le", bounds.get("lt"))
        if low is not None and high is not None:
            text = f"{noun} between {low:g} and {high:g}"
        elif low is not None:
            text = f"{noun} {'>=' if 'ge' in bounds else '>'} {low:g}"
        elif high is not None:
            text = f"{noun} {'<=' if 'le' in bounds else '<'} {high:g}"
        else:
            text = noun
        return text + (" or null" if optional else "")
    if annotation is str:
        return "a string" + (" or null" if optional else "")
    if origin is list:
        size = f" with at least {bounds['min_length']} item(s)" if "min_length" in bounds else ""
        return f"a list{size}"
    if origin is dict or (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
        return "a mapping"
    return None
