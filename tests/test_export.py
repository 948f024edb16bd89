"""Export and report: SFT examples from kept trajectories, loaded by Hugging Face `datasets`
and rendered with a real tokenizer's chat template; split by agent, deduplicated, capped;
the HTML report opened in headless Chromium."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from conversations import conversation_problems
from scripted_worlds import cancel_task, order_agent, order_tools
from test_rollouts import CANCEL_PATCH, ScriptedClient, cfg, run, user_says

from worldsmith.config import ExportConfig, JudgeConfig
from worldsmith.export.sft import (
    build_examples,
    dataset_card,
    held_out,
    held_out_keys,
    sft_messages,
    split_text,
    write_export,
)
from worldsmith.judge.episode import decide
from worldsmith.records import HeldOut, SFTExample
from worldsmith.rollouts.episode import Episode
from worldsmith.worldmodel.toolset import ToolSet

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "src" / "worldsmith" / "llm" / "chat_templates" / "smollm2_tools.jinja"
SIM = [
    {"result": {"id": "o-1001", "status": "open", "item": "blue kettle"}, "patch": []},
    {"result": {"status": "cancelled"}, "patch": CANCEL_PATCH},
]


def world(
    n_agents: int = 5, per_agent: int = 2, wording=lambda a, k: f"Order o-1001 is cancelled, agent {a} case {k}."
):
    """Trajectories (all passing) of `n_agents` agents, with their tasks, agents and verdicts."""
    tools = order_tools()
    trajs, tasks, agents, verdicts = [], {}, {}, []
    for a in range(n_agents):
        agent = order_agent(tools).model_copy(update={"agent_id": f"agt_{a}", "domain": f"domain_{a % 2}"})
        agents[agent.agent_id] = agent
        for k in range(per_agent):
            task = cancel_task(task_id=f"tsk_{a}_{k}").model_copy(update={"agent_id": agent.agent_id})
            tasks[task.task_id] = task
            client = ScriptedClient(
                user_sim=user_says(("Please cancel order o-1001.", "continue"), ("Thanks.", "stop")),
                agent=[
                    [("get_order", {"order_id": "o-1001"})],
                    [("cancel_order", {"order_id": "o-1001"})],
                    wording(a, k),
                ],
                tool_sim=list(SIM),
            )
            ep = Episode(f"trj_{a}_{k}", task, agent, ToolSet.build(tools), k, 100 * a + k)
            # the wordings tell the examples apart ("agent 0 case 1"), words no result says: the lenient policy keeps
            # them (these tests are the export's, not the judge's)
            t = run(ep, client, cfg(), judge=JudgeConfig(unverifiable="lenient"))
            trajs.append(t)
            verdicts.append(decide(JudgeConfig(critic=False, unverifiable="lenient"), task, t, None))
    assert all(v.passed for v in verdicts)
    return trajs, tasks, agents, verdicts


def test_sft_messages_end_on_the_agent_and_drop_stop_tokens():
    trajs, *_ = world(1, 1)
    msgs = sft_messages(trajs[0])
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert "###" not in json.dumps(msgs) and conversation_problems(msgs) == []


def test_split_by_agent_dedup_and_caps():
    trajs, tasks, agents, verdicts = world(6, 2)
    examples, dropped = build_examples("run", ExportConfig(validation_fraction=0.3), trajs, verdicts, tasks, agents)
    by_split = {s: {e.metadata["agent_id"] for e in examples if e.split == s} for s in ("train", "validation")}
    assert by_split["train"] and by_split["validation"] and not by_split["train"] & by_split["validation"]  # no leakage
    assert len(examples) == 12 and not dropped
    # the same trajectory twice (another id): an exact duplicate; one word changed: a near duplicate
    twin = trajs[0].model_copy(update={"trajectory_id": "trj_twin"})
    verdicts_twin = verdicts + [verdicts[0].model_copy(update={"trajectory_id": "trj_twin"})]
    examples, dropped = build_examples("run", ExportConfig(), trajs + [twin], verdicts_twin, tasks, agents)
    assert dropped == Counter({"exact_duplicate": 1})
    same = lambda a, k: (
        "Order o-1001 is cancelled now; the refund of the blue kettle goes back to your card within five working days."
    )  # noqa: E731
    t2, tk2, ag2, v2 = world(3, 1, wording=same)
    examples, dropped = build_examples("run", ExportConfig(), t2, v2, tk2, ag2)
    assert len(examples) == 1 and dropped["near_duplicate"] + dropped["exact_duplicate"] == 2
    examples, dropped = build_examples(
        "run", ExportConfig(near_duplicate_threshold=1.0, max_per_tool=4), trajs, verdicts, tasks, agents
    )
    assert len(examples) == 4 and dropped["cap_per_tool"] == 8
    examples, dropped = build_examples("run", ExportConfig(max_per_domain=3), trajs, verdicts, tasks, agents)
    assert Counter(e.metadata["domain"] for e in examples) == {"domain_0": 3, "domain_1": 3}


def test_the_card_counts_examples_by_decoding_and_difficulty():
    trajs, tasks, agents, verdicts = world(3, 2)
    trajs = [
        t.model_copy(update={"decoding": "grounded" if i < 4 else "native", "reply_resamples": 2 * (i == 1)})
        for i, t in enumerate(trajs)
    ]
    examples, dropped = build_examples("run", ExportConfig(), trajs, verdicts, tasks, agents)
    assert [e.metadata["decoding"] for e in examples] == ["grounded"] * 4 + ["native"] * 2
    card = dataset_card("run", examples, {}, dropped, {}, {}, "licence", {"agent": "m"})
    assert "- Agent decoding: grounded 4, native 2. `grounded`:" in card
    assert "- Replies sampled again: 1 of 6 examples" in card
    assert f"- Difficulties: {tasks[trajs[0].task_id].difficulty} 6." in card
    # the diversity table: one family (these tasks have no blueprint: the difficulty), and the total
    assert {e.metadata["family"] for e in examples} == {tasks[trajs[0].task_id].difficulty}
    table = card.split("## Diversity by task family")[1].split("`chain shapes`")[0]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    assert rows[0].startswith("| family | items | no call | chain shapes | tools | worlds | distinct 2 | near dup")
    assert rows[1].startswith(f"| {tasks[trajs[0].task_id].difficulty} | 6 |") and rows[2].startswith("| all | 6 |")


def test_the_card_counts_worlds_and_examples_by_where_the_world_came_from():
    from worldsmith.export.sft import WorldInfo

    trajs, tasks, agents, verdicts = world(3, 2)
    sources = ["pack", "crawled", "llm"]  # one world per agent, of each source
    agents = {
        a: agent.model_copy(update={"world_id": f"wld_{i}"}) for i, (a, agent) in enumerate(sorted(agents.items()))
    }
    worlds = {f"wld_{i}": WorldInfo(s) for i, s in enumerate(sources)}
    examples, dropped = build_examples("run", ExportConfig(), trajs, verdicts, tasks, agents)
    assert len(examples) == 6 and {e.metadata["world_id"] for e in examples} == set(worlds)
    card = dataset_card("run", examples, {}, dropped, {}, {}, "licence", {"agent": "m"}, worlds=worlds)
    assert (
        "- Worlds: 3 (crawled 1, designed 1, pack 1); examples by world source: crawled 2, designed 2, pack 2." in card
    )


def test_held_out_keys_are_stable_and_never_all_or_none():
    ids = [f"agt_{i}" for i in range(10)]
    held = held_out_keys(ids, 0.2)
    assert held == held_out_keys(list(reversed(ids)), 0.2) and 0 < len(held) < 10
    assert held_out_keys(ids[:2], 0.001) and len(held_out_keys(ids[:2], 0.999)) == 1
    assert held_out_keys(ids, 0) == set() and held_out_keys(ids[:1], 0.5) == set()


def in_worlds(n_worlds: int, n_agents: int, per_agent: int = 1):
    """`world(n_agents)`, its agents spread over `n_worlds` worlds (agent a in world w{a % n_worlds})."""
    trajs, tasks, agents, verdicts = world(n_agents, per_agent)
    agents = {a: ag.model_copy(update={"world_id": f"w{int(a.split('_')[1]) % n_worlds}"}) for a, ag in agents.items()}
    return trajs, tasks, agents, verdicts


def test_split_by_world_holds_out_whole_worlds_drawn_regardless_of_what_passed(tmp_path):
    trajs, tasks, agents, verdicts = in_worlds(4, 12)
    cfg = ExportConfig(split_by="world", validation_fraction=0.3)
    examples, _ = build_examples("run", cfg, trajs, verdicts, tasks, agents)
    world_of = {e.example_id: agents[e.metadata["agent_id"]].world_id for e in examples}
    by_split = {s: {world_of[e.example_id] for e in examples if e.split == s} for s in ("train", "validation")}
    assert by_split["train"] and by_split["validation"] and not by_split["train"] & by_split["validation"]
    pairs = [(a.agent_id, a.world_id) for a in agents.values()]
    held = held_out(cfg, pairs, [t.agent_id for t in trajs])
    assert set(held.worlds) == by_split["validation"]
    assert set(held.agents) == {a for a, w in pairs if w in held.worlds}  # every agent of a held world
    # which worlds are held out does not depend on which episodes passed: an eval on them is not biased
    assert held_out(cfg, pairs, []) == held
    # by agent (as before): a world's agents may land in both splits
    by_agent, _ = build_examples("run", cfg.model_copy(update={"split_by": "agent"}), trajs, verdicts, tasks, agents)
    split_worlds = {s: {world_of[e.example_id] for e in by_agent if e.split == s} for s in ("train", "validation")}
    assert split_worlds["train"] & split_worlds["validation"]
    write_export(examples, tmp_path / "export", "card", held=held)
    assert HeldOut.read(tmp_path / "export") == held and HeldOut.read(tmp_path / "nothing") is None
    said = split_text(held)
    assert said.startswith("The split is by world") and all(f"`{w}`" in said for w in held.worlds)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    trajs, tasks, agents, verdicts = world(5, 2)
    examples, dropped = build_examples("run", ExportConfig(validation_fraction=0.3), trajs, verdicts, tasks, agents)
    out = tmp_path_factory.mktemp("export") / "run"
    card = dataset_card(
        "run",
        examples,
        {"trajectories": 10, "passed": 10, "exported": len(examples)},
        dropped,
        JudgeConfig().model_dump(),
        {t.tool_id: t for t in order_tools()},
        "licence text",
        {"agent": "m"},
    )
    write_export(examples, out, card)
    return out, examples


def test_the_export_loads_in_datasets_in_every_layout(exported):
    datasets = pytest.importorskip("datasets")
    out, examples = exported
    files = {"train": str(out / "data" / "train.parquet"), "validation": str(out / "data" / "validation.parquet")}
    ds = datasets.load_dataset("parquet", data_files=files)
    assert ds["train"].num_rows + ds["validation"].num_rows == len(examples) and ds["validation"].num_rows > 0
    assert set(ds["train"].column_names) == {"example_id", "messages", "tools", "metadata"}
    row = ds["train"][0]
    assert isinstance(row["tools"], str) and json.loads(row["tools"])[0]["type"] == "function"
    assert row["messages"][2]["tool_calls"][0]["function"]["name"] == "get_order"
    assert row["metadata"]["run_id"] == "run" and row["metadata"]["agent_id"].startswith("agt_")
    js = datasets.load_dataset("json", data_files={"train": str(out / "jsonl" / "train.jsonl")})
    assert js["train"].num_rows == ds["train"].num_rows
    card = datasets.load_dataset(str(out))  # the card's `configs` header points at the parquet files
    assert card["validation"].num_rows == ds["validation"].num_rows
    assert not {ds["train"]["metadata"][i]["agent_id"] for i in range(ds["train"].num_rows)} & {
        ds["validation"]["metadata"][i]["agent_id"] for i in range(ds["validation"].num_rows)
    }


def test_the_openai_format_is_valid(exported):
    out, examples = exported
    lines = [
        json.loads(line)
        for s in ("train", "validation")
        for line in (out / "openai" / f"{s}.jsonl").read_text().splitlines()
    ]
    assert len(lines) == len(examples)
    for ex in lines:
        assert set(ex) == {"messages", "tools", "parallel_tool_calls"} and isinstance(ex["tools"], list)
        assert conversation_problems(ex["messages"]) == [] and ex["messages"][-1]["role"] == "assistant"
        assert all(set(m) <= {"role", "content", "tool_calls", "tool_call_id"} for m in ex["messages"])


@pytest.fixture(scope="module")
def tokenizer():
    """SmolLM2's real tokenizer (read from the packaged GGUF) with worldsmith's tool template."""
    transformers = pytest.importorskip("transformers")
    from worldsmith.llm.server import packaged_gguf

    gguf = packaged_gguf()
    tok = transformers.AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    tok.chat_template = TEMPLATE.read_text()
    return tok


def test_every_example_renders_with_the_chat_template(exported, tokenizer):
    datasets = pytest.importorskip("datasets")
    out, examples = exported
    ds = datasets.load_dataset("parquet", data_files={"train": str(out / "data" / "*.parquet")})["train"]
    for row in ds:
        messages = [
            {k: v for k, v in m.items() if v is not None} for m in row["messages"]
        ]  # as TRL sees them after Arrow
        text = tokenizer.apply_chat_template(messages, tools=json.loads(row["tools"]), tokenize=False)
        assert (
            "<tools>" in text and '"name": "get_order"' in text and "<tool_call>" in text and "<tool_response>" in text
        )
        assert text.count("<|im_start|>assistant") == sum(m["role"] == "assistant" for m in messages)
        enc = tokenizer.apply_chat_template(
            messages, tools=json.loads(row["tools"]), tokenize=True, return_dict=True, return_assistant_tokens_mask=True
        )
        mask = enc["assistant_masks"]
        assert 0 < sum(mask) < len(mask)
        trained = tokenizer.decode([t for t, m in zip(enc["input_ids"], mask, strict=True) if m])
        assert (
            "cancelled" in trained
            and "<tool_call>" in trained
            and "Please cancel" not in trained
            and "<tool_response>" not in trained
        )


# ------------------------------------------------------------------ report


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    from worldsmith.report.stage import build_report
    from worldsmith.store import RunStore

    trajs, tasks, agents, verdicts = world(3, 2)
    data = tmp_path_factory.mktemp("data")
    store = RunStore(data, "rep")
    store.append(order_tools())
    store.append(list(agents.values()))
    store.append(list(tasks.values()))
    store.append(trajs)
    verdicts[0] = verdicts[0].model_copy(
        update={"passed": False, "reasons": ["criterion:state:c2", "hack:unbacked_claim"]}
    )
    store.append(verdicts)
    examples, _ = build_examples("rep", ExportConfig(), trajs, verdicts, tasks, agents)
    store.append(examples)
    store.write_info(
        status="finished",
        started_at="2026-11-29T00:00:00",
        usage={
            "agent": {"calls": 9, "prompt_tokens": 900, "completion_tokens": 120},
            "tool_sim": {"calls": 6, "prompt_tokens": 600, "completion_tokens": 90},
        },
    )
    out = store.root / "report.html"
    head = build_report(data, "rep", out)
    return out, head


def test_the_report_has_the_headline_figures(report):
    out, head = report
    assert (
        head["trajectories"] == 6
        and head["passed"] == 5
        and head["exported"] == 5
        and head["pass_rate"] == round(5 / 6, 3)
    )
    assert head["generated_tokens"] == 210 and head["tools"] == 3
    page = out.read_text()
    assert page.count('<figure class="plot"') == 15 and "criterion:state" in page and "<script" not in page
    assert 'id="plot-rewards"' in page  # the RL reward by component
    # where the worlds came from, and the crawled tools code runs: the one crawled tool (the time server's) is unbound
    assert 'id="plot-world-source"' in page and 'id="plot-binding"' in page and head["crawled_bound_share"] == 0.0
    # pass rate by task family, and the exported examples' diversity table: its total row counts the 5 exported
    assert 'id="plot-family"' in page
    table = page.split('<table id="diversity">')[1].split("</table>")[0]
    assert "<th>near duplicate rate</th>" in table and '<tr><td class="n">all</td><td class="n">5</td>' in table


def test_the_reward_components_are_queryable_with_duckdb(report):
    import duckdb

    from worldsmith.records import RECORD_TYPES
    from worldsmith.store import RunStore

    out, _ = report
    con = duckdb.connect()
    RunStore(out.parent.parent.parent, "rep").views(con, RECORD_TYPES)
    rows = con.execute(
        "SELECT json_extract(reward, '$.verifiable')::DOUBLE, json_extract(reward, '$.format')::DOUBLE, "
        "json_extract(reward, '$.total')::DOUBLE, json_extract(reward, '$.rubric') FROM verdicts"
    ).fetchall()
    # six passing episodes of the order world, each its two calls well formed, no critic
    assert len(rows) == 6 and all(r[0] == 1.0 and r[1] == 1.0 and r[2] >= 1.0 and r[3] == "null" for r in rows), rows


@pytest.mark.browser
def test_the_report_renders_in_headless_chromium(report, tmp_path):
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    assert Path(chromium).exists(), "Chromium is missing: `make setup-browser` installs Debian's chromium"
    out, _ = report
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
    ]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=flags)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(out.as_uri())
        assert page.title() == "worldsmith report: rep"
        plots = page.locator("figure.plot svg")
        # every figure drew its svg; 15 is the report's plot list (funnel ... crawled tools bound, rewards)
        assert plots.count() == page.locator("figure.plot").count() == 15
        for i in range(plots.count()):
            box = plots.nth(i).bounding_box()
            assert box and box["width"] > 100 and box["height"] > 80, (i, box)
        bars = page.locator("#plot-funnel svg path, #plot-funnel svg rect")
        assert bars.count() > 6  # the funnel's bars were drawn
        assert "pass_rate" in page.locator("#headline").inner_text()
        page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        browser.close()
    assert (tmp_path / "report.png").stat().st_size > 20_000


# ------------------------------------------------------------------ the export stage, streamed


@pytest.fixture
def stored(tmp_path):
    """A run store holding world(6, 2) over several shards (not in id order), an exact twin, a
    failed verdict and a trajectory never judged; and a context whose export caps per domain
    (so the order examples are decided in matters)."""
    from worldsmith.config import validate_config
    from worldsmith.context import RunContext
    from worldsmith.llm import Prompts
    from worldsmith.store import RunStore

    trajs, tasks, agents, verdicts = world(6, 2)
    trajs.append(trajs[0].model_copy(update={"trajectory_id": "trj_twin"}))
    verdicts.append(verdicts[0].model_copy(update={"trajectory_id": "trj_twin"}))
    verdicts[3] = verdicts[3].model_copy(update={"passed": False, "reasons": ["criterion:state:c2"]})
    trajs.append(trajs[1].model_copy(update={"trajectory_id": "trj_unjudged"}))
    store = RunStore(tmp_path / "data", "exp")
    store.append(order_tools())
    store.append(list(agents.values()))
    store.append(list(tasks.values()))
    for part in (trajs[7:], trajs[:3], trajs[3:7]):
        store.append(part[::-1])
    store.append(verdicts[5:])
    store.append(verdicts[:5])
    # every kept sample (`per_task: all`): the exact twin shares its task, and is what the dedup must drop
    cfg = validate_config({"export": {"validation_fraction": 0.3, "max_per_domain": 5, "per_task": "all"}})
    return RunContext(cfg=cfg, root=tmp_path, run_id="exp", store=store, prompts=Prompts(ROOT / "prompts"))


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_streamed_export_writes_what_the_in_memory_functions_write(stored, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from worldsmith.export.formats import SCHEMA
    from worldsmith.export.formats import parquet_row as _row
    from worldsmith.export.stage import export_dir
    from worldsmith.export.stage import run as run_export
    from worldsmith.records import Agent, Task, ToolSpec, Trajectory, Verdict

    ctx = stored
    counts = run_export(ctx, batch_rows=2, bucket_rows=5)  # sorted in three buckets
    # the export as it was before streaming: every record read at once
    store, cfg = ctx.store, ctx.cfg.export
    trajectories, verdicts = store.read(Trajectory), store.read(Verdict)
    tasks, agents = {t.task_id: t for t in store.read(Task)}, {a.agent_id: a for a in store.read(Agent)}
    tools = {t.tool_id: t for t in store.read(ToolSpec)}
    examples, dropped = build_examples("exp", cfg, trajectories, verdicts, tasks, agents)
    funnel = {
        "tools": len(tools),
        "agents": len(agents),
        "tasks": len(tasks),
        "trajectories": len(trajectories),
        "passed": sum(v.passed for v in verdicts),
        "exported": len(examples),
    }
    roles = ctx.cfg.llm.roles
    models = {
        r: getattr(roles, r).model or ctx.cfg.llm.endpoints[getattr(roles, r).endpoint].model
        for r in ("agent", "user_sim", "tool_sim", "critic")
    }
    kept_agents = [
        t.agent_id for t in trajectories if any(v.passed and v.trajectory_id == t.trajectory_id for v in verdicts)
    ]
    held = held_out(cfg, [(a.agent_id, a.world_id) for a in agents.values()], kept_agents)
    card = dataset_card(
        "exp",
        examples,
        funnel,
        dropped,
        ctx.cfg.judge.model_dump(exclude={"enabled", "concurrency"}),
        tools,
        cfg.licence_note,
        models,
        held=held,
    )
    write_export(examples, tmp_path / "reference", card, held=held)

    assert dropped == Counter({"exact_duplicate": 1, "cap_per_domain": 1}) and len(examples) == 10
    splits = Counter(e.split for e in examples)
    assert counts == {
        "examples": 10,
        "train": splits["train"],
        "validation": splits["validation"],
        "dropped:cap_per_domain": 1,
        "dropped:exact_duplicate": 1,
        "folder": str(export_dir(ctx)),
    }
    assert folder_bytes(export_dir(ctx)) == folder_bytes(tmp_path / "reference")
    assert {p.name for p in export_dir(ctx).parent.iterdir()} == {"exp"}  # no temporary or spill folder left
    stored_examples = {e.example_id: e for e in store.read(SFTExample)}
    assert len(store.shards("sft")) > 1 and sorted(stored_examples) == sorted(e.example_id for e in examples)
    assert all(
        stored_examples[e.example_id].model_dump(exclude={"created_at"}) == e.model_dump(exclude={"created_at"})
        for e in examples
    )
    # under one row group of examples, the Parquet file is byte for byte what pq.write_table of the whole split makes
    train = [_row(e) for e in examples if e.split == "train"]
    pq.write_table(pa.Table.from_pylist(train, schema=SCHEMA), tmp_path / "whole.parquet", compression="zstd")
    assert (tmp_path / "whole.parquet").read_bytes() == (export_dir(ctx) / "data" / "train.parquet").read_bytes()


def test_the_batch_size_does_not_change_the_files(stored, monkeypatch):
    import pyarrow.parquet as pq

    from worldsmith.export import formats
    from worldsmith.export.stage import export_dir
    from worldsmith.export.stage import run as run_export

    monkeypatch.setattr(formats, "ROW_GROUP_ROWS", 3)  # several row groups, which must not follow the read batches
    results = []
    for batch_rows, bucket_rows in ((1, 1), (4, 3), (2, 7), (10_000, 10_000)):
        counts = run_export(stored, batch_rows=batch_rows, bucket_rows=bucket_rows)
        results.append((counts, folder_bytes(export_dir(stored))))
    assert all(r == results[0] for r in results)
    assert pq.ParquetFile(export_dir(stored) / "data" / "train.parquet").metadata.num_row_groups > 1


def test_a_failed_export_leaves_the_previous_one(stored, monkeypatch):
    from worldsmith.export.sft import ExampleBuilder
    from worldsmith.export.stage import export_dir
    from worldsmith.export.stage import run as run_export

    run_export(stored)
    before = folder_bytes(export_dir(stored))
    original = ExampleBuilder.add

    def add_then_fail(self, traj, *args):
        if traj.trajectory_id == "trj_3_0":
            raise RuntimeError("disk full")
        return original(self, traj, *args)

    monkeypatch.setattr(ExampleBuilder, "add", add_then_fail)
    examples_before = sorted(e.example_id for e in stored.store.read(SFTExample))
    with pytest.raises(RuntimeError, match="disk full"):
        run_export(stored, batch_rows=2, bucket_rows=4)
    assert folder_bytes(export_dir(stored)) == before
    assert {p.name for p in export_dir(stored).parent.iterdir()} == {"exp"}
    # the run's stored examples too: nothing the failed export appended stays beside them
    assert sorted(e.example_id for e in stored.store.read(SFTExample)) == examples_before


def test_after_a_re_judge_the_runs_examples_are_the_new_exports_only(stored):
    """Re-judged (the verdicts deleted and made again), one episode is no longer kept: the export
    folder and the run's stored examples (what `worldsmith query` reads as `sft`) both lose it."""
    import shutil

    from worldsmith.export.stage import run as run_export
    from worldsmith.records import Verdict

    first = run_export(stored)
    store = stored.store
    kept = sorted(e.metadata["trajectory_id"] for e in store.read(SFTExample))
    assert first["examples"] == len(kept) == 10
    verdicts = store.read(Verdict)
    shutil.rmtree(store.stage_dir("verdicts"))
    store._ids.pop("verdicts", None)
    dropped = kept[0]
    store.append(
        [
            v.model_copy(update={"passed": False, "reasons": ["hack:unfounded_advice"]})
            if v.trajectory_id == dropped
            else v
            for v in verdicts
        ]
    )
    second = run_export(stored)
    now = sorted(e.metadata["trajectory_id"] for e in store.read(SFTExample))
    # (the cap per domain lets the one it held back in, so the count can stay the same)
    assert dropped not in now and len(now) == len(set(now)) == second["examples"] >= 9
    assert set(now) != set(kept)


# ------------------------------------------------------------------ export formats (formats.py, export.formats)


def _call(call_id: str, order_id: str) -> dict:
    arguments = json.dumps({"order_id": order_id})
    return {"id": call_id, "type": "function", "function": {"name": "get_order", "arguments": arguments}}


def test_sharegpt_rows_round_trip_a_conversation_with_tool_calls(tmp_path):
    parameters = {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}
    function = {"name": "get_order", "description": "Read an order.", "parameters": parameters}
    messages = [
        {"role": "system", "content": "You help with orders."},
        {"role": "user", "content": "Where is order o-1?"},
        {"role": "assistant", "content": None, "tool_calls": [_call("c1", "o-1")]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"status": "shipped"}'},
        {"role": "assistant", "content": "Both, then.", "tool_calls": [_call("c2", "o-2"), _call("c3", "o-3")]},
        {"role": "tool", "tool_call_id": "c2", "content": '{"status": "open"}'},
        {"role": "tool", "tool_call_id": "c3", "content": "not found"},
        {"role": "assistant", "content": "o-1 is shipped, o-2 is open, o-3 was not found."},
    ]
    tools = json.dumps([{"type": "function", "function": function}])
    example = SFTExample(
        example_id="ex_1",
        messages=messages,
        tools=tools,
        split="train",
        metadata={"agent_id": "agt_1", "called_tool_ids": ["get_order"]},
    )
    paths = write_export([example], tmp_path / "out", "card", formats=["sharegpt"])
    assert sorted(paths) == ["card", "sharegpt"] and (paths["sharegpt"] / "validation.jsonl").read_text() == ""
    (line,) = (paths["sharegpt"] / "train.jsonl").read_text().splitlines()
    row = json.loads(line)
    assert set(row) == {"conversations", "tools"} and isinstance(row["tools"], str)
    assert row["conversations"] == [
        {"from": "system", "value": "You help with orders."},
        {"from": "human", "value": "Where is order o-1?"},
        {"from": "function_call", "value": '{"name": "get_order", "arguments": {"order_id": "o-1"}}'},
        {"from": "observation", "value": '{"status": "shipped"}'},
        # parallel calls: one turn, a list; the text beside them has no place in the format
        {
            "from": "function_call",
            "value": '[{"name": "get_order", "arguments": {"order_id": "o-2"}}, '
            '{"name": "get_order", "arguments": {"order_id": "o-3"}}]',
        },
        # their replies: one turn, a list (LLaMA-Factory wants the roles to alternate)
        {"from": "observation", "value": '["{\\"status\\": \\"open\\"}", "not found"]'},
        {"from": "gpt", "value": "o-1 is shipped, o-2 is open, o-3 was not found."},
    ]
    assert json.loads(row["tools"]) == [function]  # the bare function objects


def test_an_unknown_or_missing_export_format_is_a_clear_config_error():
    from worldsmith.config import EXPORT_FORMATS, ConfigError, ExportConfig, apply_overrides, validate_config
    from worldsmith.export.formats import FORMATS

    def problems(formats) -> list[str]:
        with pytest.raises(ConfigError) as err:
            validate_config({"export": {"formats": formats}})
        return err.value.problems

    known = '"parquet", "jsonl", "openai", "sharegpt"'
    assert problems(["parquet", "jsonl", "csv"]) == [f'export.formats.2: got "csv", expected one of {known}']
    assert tuple(FORMATS) == EXPORT_FORMATS  # the config names the registry's formats, in its order
    assert known == ", ".join(f'"{name}"' for name in FORMATS)
    assert problems(["parquet", "openai"]) == [
        (
            'export.formats: got ["parquet", "openai"], expected a list that includes "jsonl" '
            "(finetune and eval read <export>/jsonl/<split>.jsonl)"
        )
    ]
    assert problems(["jsonl", "openai", "jsonl"]) == [
        'export.formats.2: got "jsonl" a second time, expected each format once'
    ]
    assert problems([]) == ["export.formats: got [], expected a list with at least 1 item(s)"]
    with pytest.raises(ConfigError, match=r'export\.formats\.1: got "xml", expected one of'):
        validate_config(apply_overrides({}, ["export.formats=[jsonl, xml]"]))
    assert validate_config({"export": {"formats": ["sharegpt", "jsonl"]}}).export.formats == ["sharegpt", "jsonl"]
    assert ExportConfig().formats == ["parquet", "jsonl", "openai"]  # the default skips the check (see ExportConfig)
    with pytest.raises(ValueError, match="export.formats.0"):
        ExportConfig().formats = ["csv", "jsonl"]  # checked on assignment too


def test_the_chosen_formats_write_exactly_their_folders(stored):
    from worldsmith.export.stage import export_dir
    from worldsmith.export.stage import run as run_export

    def files(*folders: str) -> set[str]:
        return {f"{d}/{s}.jsonl" for d in folders for s in ("train", "validation")}

    parquet = {"data/train.parquet", "data/validation.parquet"}
    chosen = {
        ("jsonl",): files("jsonl"),
        ("sharegpt", "jsonl"): files("jsonl", "sharegpt"),
        ("parquet", "jsonl", "openai"): parquet | files("jsonl", "openai"),
        ("parquet", "jsonl", "openai", "sharegpt"): parquet | files("jsonl", "openai", "sharegpt"),
    }
    for names, written in chosen.items():
        stored.cfg.export.formats = list(names)
        run_export(stored)
        out = export_dir(stored)
        assert set(folder_bytes(out)) == written | {"README.md", "held_out.json"}, names
        card = (out / "README.md").read_text()
        section = card.split("## Format")[1].splitlines()
        table = [line.split(" | ")[0].removeprefix("| ") for line in section if line.startswith("| ")]
        assert table[2:] == list(names)  # after the header rows: the formats written, in the order chosen
        header = card.split("---")[1]
        assert ("path: data/train.parquet" in header) == ("parquet" in names)
        assert ("path: jsonl/train.jsonl" in header) == ("parquet" not in names)  # without Parquet: the JSONL files
        if "sharegpt" in names:
            assert "| sharegpt | `sharegpt/train.jsonl`, `sharegpt/validation.jsonl` |" in card
            turns = json.loads((out / "sharegpt" / "train.jsonl").read_text().splitlines()[0])["conversations"]
            same = json.loads((out / "jsonl" / "train.jsonl").read_text().splitlines()[0])["messages"]  # that example
            assert [t["from"] for t in turns] == [
                "system",
                "human",
                "function_call",
                "observation",
                "function_call",
                "observation",
                "gpt",
            ]
            assert json.loads(turns[2]["value"]) == {"name": "get_order", "arguments": {"order_id": "o-1001"}}
            assert json.loads(turns[4]["value"]) == {"name": "cancel_order", "arguments": {"order_id": "o-1001"}}
            assert [t["value"] for t in turns[3::2]] == [m["content"] for m in same if m["role"] == "tool"]
            assert (turns[0]["value"], turns[-1]["value"]) == (same[0]["content"], same[-1]["content"])


def test_without_parquet_the_card_points_load_dataset_at_the_jsonl(exported, tmp_path):
    datasets = pytest.importorskip("datasets")
    _, examples = exported
    tools = {t.tool_id: t for t in order_tools()}
    card = dataset_card("run", examples, {}, Counter(), {}, tools, "licence text", {"agent": "m"}, formats=["jsonl"])
    write_export(examples, tmp_path / "run", card, formats=["jsonl"])
    ds = datasets.load_dataset(str(tmp_path / "run"))
    assert {s: ds[s].num_rows for s in ds} == dict(Counter(e.split for e in examples))
    assert set(ds["train"].column_names) == {"example_id", "messages", "tools", "metadata"}


def test_one_example_per_task_takes_the_best_kept_sample_and_the_card_counts_tasks(tmp_path):
    """export.per_task: best keeps, of each task's kept samples, the best (here: with no critic and no unverifiable
    claim, the one of fewest calls, then the shortest); the card counts distinct tasks, families and the examples
    with no tool call. per_task: all keeps every sample that is not a duplicate."""
    from worldsmith.config import validate_config
    from worldsmith.context import RunContext
    from worldsmith.export.stage import export_dir
    from worldsmith.export.stage import run as run_export
    from worldsmith.llm import Prompts
    from worldsmith.store import RunStore

    trajs, tasks, agents, verdicts = world(3, 1)
    longer, answered = [], []
    for t, v in zip(trajs, verdicts, strict=True):
        messages = [dict(m) for m in t.messages]
        last = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
        messages[last]["content"] += " It will not be charged, and you will get an email about it shortly."
        longer.append(t.model_copy(update={"trajectory_id": t.trajectory_id + "_long", "messages": messages}))
        answered.append(v.model_copy(update={"trajectory_id": t.trajectory_id + "_long"}))
    # a sample that called nothing: its own task, so the card has one example without a call
    first = trajs[0]
    bare = [m for m in first.messages if m["role"] in ("system", "user")][:2] + [
        {"role": "assistant", "content": "Order o-1001 is cancelled."}
    ]
    quiet = first.model_copy(update={"trajectory_id": "trj_quiet", "task_id": "tsk_quiet", "messages": bare})
    tasks["tsk_quiet"] = tasks[first.task_id].model_copy(update={"task_id": "tsk_quiet"})
    store = RunStore(tmp_path / "data", "one")
    store.append(order_tools())
    store.append(list(agents.values()))
    store.append(list(tasks.values()))
    store.append([*longer, *trajs, quiet])
    store.append(
        [*answered, *verdicts, verdicts[0].model_copy(update={"trajectory_id": "trj_quiet", "task_id": "tsk_quiet"})]
    )
    for per_task, n in (("all", 7), ("best", 4)):
        export = {"validation_fraction": 0.0, "per_task": per_task, "near_duplicate_threshold": 1.0}
        cfg = validate_config({"export": export})
        ctx = RunContext(cfg=cfg, root=tmp_path, run_id="one", store=store, prompts=Prompts(ROOT / "prompts"))
        counts = run_export(ctx)
        ids = sorted(e.metadata["trajectory_id"] for e in store.read(SFTExample))
        assert counts["examples"] == len(ids) == n, (per_task, ids, counts)
        card = (export_dir(ctx) / "README.md").read_text()
        assert f"Distinct tasks: 4 (`export.per_task: {per_task}`" in card
        assert f"No tool call: 1 of {n} examples" in card
        if per_task == "best":
            assert ids == sorted([t.trajectory_id for t in trajs] + ["trj_quiet"])  # the shorter of each pair
            assert counts["dropped:other_sample_of_task"] == 3


def test_held_out_sources_hold_out_a_world_of_each_listed_source_and_keep_one_for_training():
    sources = {f"p{i}": "pack" for i in range(4)} | {f"c{i}": "crawled" for i in range(3)}
    sources |= {"d0": "derived", "d1": "derived", "l0": "llm"}
    pairs = [(f"agt_{w}", w) for w in sources]
    plain = held_out(ExportConfig(split_by="world", validation_fraction=0.1), pairs, [], sources)
    # the fraction alone leaves some source unread by an eval (what the option is for)
    assert {sources[w] for w in plain.worlds} < {"pack", "crawled", "derived"}
    cfg = ExportConfig(split_by="world", validation_fraction=0.1, held_out_sources=["pack", "crawled", "derived"])
    held = held_out(cfg, pairs, [], sources)
    for source in ("pack", "crawled", "derived"):
        group = {w for w, s in sources.items() if s == source}
        assert group & set(held.worlds), source  # an eval plays this kind of world
        assert group - set(held.worlds), source  # and training still sees it
    assert "l0" not in held.worlds or "l0" in plain.worlds  # a source of one world is never forced out
    assert set(held.worlds) >= set(plain.worlds)  # the strata add to the fraction's draw, they do not redraw it
    assert held_out(cfg, pairs, ["agt_p0"], sources) == held  # what passed does not move the split
    assert held_out(cfg, pairs, [], None).worlds == plain.worlds  # no sources known: the fraction alone
