"""`worldsmith eval` and the agent policy served apart (llm.policy): the figures (pass^k,
tool-call validity), which tasks are held out, how the agent role is routed, and end to end:
`worldsmith finetune` on SmolLM2 writes a folder that vLLM serves as the agent policy for the
held-out tasks, beside the base model, with the simulators on the embedded llama.cpp server."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys

import httpx
import pytest
import yaml
from conftest import free_port, llm_config
from scripted_worlds import cancel_task, order_agent, order_tools
from test_export import in_worlds, world
from test_rollouts import ScriptedClient, cfg, episode, run, user_says

from worldsmith.config import ConfigError, ExportConfig, JudgeConfig, validate_config
from worldsmith.evaluate import EvalModel, held_out_tasks, model_scores, pass_hat_k
from worldsmith.evaluate.play import (
    VoidEval,
    check_servable,
    eval_config,
    eval_run_id,
    refuse_void,
    served_as,
    write_eval_report,
)
from worldsmith.export.sft import build_examples, held_out, write_export
from worldsmith.judge.episode import decide
from worldsmith.llm.client import LLMClient, LLMResult
from worldsmith.records import Blueprint, ModelEval, Trajectory
from worldsmith.store import RunStore
from worldsmith.vocab import ROLES


@pytest.mark.parametrize(
    "n, c, k, expected", [(4, 2, 1, 0.5), (4, 2, 2, 1 / 6), (4, 4, 4, 1.0), (4, 1, 2, 0.0), (2, 2, 3, 0.0)]
)
def test_pass_hat_k_is_tau_benchs(n, c, k, expected):
    assert pass_hat_k(n, c, k) == pytest.approx(expected)


def test_held_out_tasks_are_those_of_agents_without_training_examples(tmp_path):
    trajs, tasks, agents, verdicts = world(4, 1)
    examples, _ = build_examples("src", ExportConfig(validation_fraction=0.3), trajs, verdicts, tasks, agents)
    write_export(examples, tmp_path / "export", "card")
    trained = {e.metadata["agent_id"] for e in examples if e.split == "train"}
    store = RunStore(tmp_path / "data", "src")
    store.append(list(tasks.values()) + [cancel_task(task_id="tsk_new")])  # agt_orders: never in the dataset
    held = held_out_tasks(store, tmp_path / "export")
    assert {t.agent_id for t in held} == (set(agents) - trained) | {"agt_orders"}
    assert "tsk_new" in {t.task_id for t in held} and not {t.agent_id for t in held} & trained
    assert len(held_out_tasks(store, tmp_path / "export", max_tasks=1)) == 1
    assert len(held_out_tasks(store, None)) == 5  # no dataset: every task is held out


def test_held_out_tasks_under_a_world_split_are_every_task_of_the_held_worlds(tmp_path):
    trajs, tasks, agents, verdicts = in_worlds(4, 12)
    cfg = ExportConfig(split_by="world", validation_fraction=0.3)
    examples, _ = build_examples("src", cfg, trajs, verdicts, tasks, agents)
    held = held_out(cfg, [(a.agent_id, a.world_id) for a in agents.values()], [t.agent_id for t in trajs])
    write_export(examples, tmp_path / "export", "card", held=held)
    store = RunStore(tmp_path / "data", "src")
    # agt_0's second task was never played (or failed): its world is held out or not, all the same
    extra = cancel_task(task_id="tsk_0_unplayed").model_copy(update={"agent_id": "agt_0"})
    store.append([*tasks.values(), extra, cancel_task(task_id="tsk_new")])  # agt_orders: in no world, no example
    got = held_out_tasks(store, tmp_path / "export")
    world_of = {a.agent_id: a.world_id for a in agents.values()}
    assert got and {world_of[t.agent_id] for t in got} == set(held.worlds)
    assert {t.task_id for t in got} == {
        t.task_id for t in [*tasks.values(), extra] if world_of[t.agent_id] in held.worlds
    }
    # the agent-split rule would also have played agt_orders, whose tasks are in no held world
    assert "tsk_new" not in {t.task_id for t in got}
    assert not {e.metadata["agent_id"] for e in examples if e.split == "train"} & {t.agent_id for t in got}


def test_model_scores_count_passes_per_task_and_invalid_calls(tmp_path):
    sim = [
        {
            "result": {"status": "cancelled"},
            "patch": [{"op": "replace", "path": "/orders/0/status", "value": "cancelled"}],
        }
    ]
    good = ScriptedClient(
        user_sim=user_says(("Cancel o-1001.", "continue"), ("Thanks.", "stop")),
        agent=[[("cancel_order", {"order_id": "o-1001"})], "Order o-1001 is cancelled."],
        tool_sim=sim,
    )
    bad_args = ScriptedClient(
        user_sim=user_says(("Cancel o-1001.", "continue"), ("Thanks.", "stop")),
        agent=[[("cancel_order", {"id": 5})], "Done."],
    )
    broken = ScriptedClient(
        user_sim=user_says(("Cancel o-1001.", "continue")),
        agent=[
            LLMResult(
                ok=False, role="agent", model="m", endpoint="e", error_kind="parse", error="not JSON", raw="{oops"
            )
        ],
    )
    store = RunStore(tmp_path, "ev")
    trajs = []
    for i, client in enumerate([good, bad_args, broken]):
        ep = dataclasses.replace(episode(sample=i), trajectory_id=f"trj_{i}")
        trajs.append(run(ep, client, cfg(reply_attempts=1)))  # as eval plays: one sample per step
    store.append(trajs)
    store.append([cancel_task()])
    store.append([decide(JudgeConfig(critic=False), cancel_task(), t, None) for t in trajs])
    s = model_scores(store, EvalModel("m", None), "vllm", 3)
    assert (s.trajectories, s.tasks, s.passed) == (3, 1, 1)
    assert s.pass_rate == pytest.approx(1 / 3, abs=1e-3) and s.pass_hat == {
        "1": pytest.approx(1 / 3, abs=1e-3),
        "2": 0.0,
        "3": 0.0,
    }
    # two calls made (one valid, one with invalid arguments) and one agent output that never parsed
    assert (s.tool_calls, s.valid_tool_calls, s.tool_call_validity) == (3, 1, pytest.approx(1 / 3, abs=1e-3))
    assert s.statuses["error"] == 1 and any(r.startswith("status:error") for r in s.reasons)
    # format: only the first episode's calls all parsed into a known tool with valid arguments
    assert s.format_rate == pytest.approx(1 / 3, abs=1e-3)
    assert s.by_family == {"single_call": [1, 3]}  # cancel_task: a free-form single_call task
    assert s.simulator_failures == 0  # the error was the agent's own output
    assert s.needless_call_rate is None  # no task here is one no tool serves
    # the same episodes as an irrelevance task (a blueprint with no gold call): two of three called a tool anyway
    # (the third never got a call out), and no call was wanted, so none counts toward `call_rate`
    store2 = RunStore(tmp_path, "ev-irrelevance")
    store2.append(trajs)
    store2.append([cancel_task().model_copy(update={"blueprint": Blueprint(family="irrelevance")})])
    s2 = model_scores(store2, EvalModel("m", None), "vllm", 3)
    assert s2.needless_call_rate == pytest.approx(2 / 3, abs=1e-3) and s2.call_rate is None
    store.append(
        [
            trajs[2].model_copy(
                update={"trajectory_id": "trj_sim", "sample": 3, "reason": "tool_sim_failed: no usable answer"}
            )
        ]
    )
    s = model_scores(store, EvalModel("m", None), "vllm", 3)
    assert s.simulator_failures == 1 and s.trajectories == 4


HTTP_500 = (
    'agent_output: http: http://127.0.0.1:8011/v1: HTTP 500: {"error":{"code":500,"message":"Context size has been '
    'exceeded."}} (after 5 attempts)'
)


def test_server_failures_are_not_the_models_and_an_eval_of_nothing_else_is_void(tmp_path):
    """Last loop run: the policy's llama.cpp server failed all 96 episodes, and the eval printed a pass rate of
    0 for each model as if they had played. A server failure is not an unparsable call, and when every
    episode is one there is no figure to report."""
    broken = ScriptedClient(
        user_sim=user_says(("Cancel o-1001.", "continue")),
        agent=[LLMResult(ok=False, role="agent", model="m", endpoint="e", error_kind="parse", error="not JSON")],
    )
    played = run(dataclasses.replace(episode(), trajectory_id="trj_parse"), broken, cfg(reply_attempts=1))
    lost = [
        played.model_copy(update={"trajectory_id": f"trj_http_{i}", "sample": i + 1, "reason": HTTP_500})
        for i in range(2)
    ]
    # stored before the client told them apart: llama.cpp's 500 for a tool call that was not JSON is the model's
    malformed = played.model_copy(
        update={
            "trajectory_id": "trj_bad_call",
            "sample": 3,
            "reason": "agent_output: http: http://127.0.0.1:8011/v1: HTTP 500: "
            '{"error":{"code":500,"message":"Failed to parse tool call arguments as JSON: ..."}} (after 5 attempts)',
        }
    )
    store = RunStore(tmp_path, "ev")
    store.append([played, *lost, malformed])
    s = model_scores(store, EvalModel("m", None), "llamacpp", 4, "native")
    assert played.reason.startswith("agent_output: parse")
    assert (s.server_errors, s.trajectories, s.tool_calls) == (2, 4, 2)  # the two malformed outputs were calls
    refuse_void(s, store)  # one episode was the model's own: a (poor) figure, reported
    void = RunStore(tmp_path, "void")
    void.append(lost)
    s = model_scores(void, EvalModel("m", None), "llamacpp", 3, "native")
    assert (s.server_errors, s.tool_calls) == (2, 0)
    with pytest.raises(VoidEval, match=r"all 2 episodes ended because the policy's server failed.*Context size"):
        refuse_void(s, void)


def test_the_eval_server_has_its_own_sequence_count():
    """`llm.server.parallel=32` sizes the simulators' vLLM server; the eval's llama.cpp server took it too, and
    32 sequences overflowed its shared 16,384-token context. It runs eval.parallel sequences."""
    cfg = validate_config({"llm": {"server": {"engine": "vllm", "parallel": 32}}})
    ecfg = eval_config(cfg, EvalModel("base", None), "native")
    assert ecfg.llm.policy_server().parallel == 8 and ecfg.llm.server.parallel == 32
    client = LLMClient(ecfg.llm, embedded_url="http://sims/v1", policy_url="http://p/v1")
    assert client.endpoints["policy"].cfg.max_concurrency == 8
    four = eval_config(validate_config({"eval": {"parallel": 4}}), EvalModel("base", None))
    assert four.llm.policy_server().parallel == 4
    eight = eval_config(validate_config({}), EvalModel("base", None))
    assert eight.config_hash() != four.config_hash()  # another sequence count: another eval run


def test_the_agent_role_talks_to_the_policy_server_the_others_stay():
    cfg = llm_config("http://sims:1/v1").model_copy(
        update={"policy": validate_config({"llm": {"policy": {"enabled": True}}}).llm.policy}
    )
    client = LLMClient(cfg, policy_url="http://policy:2/v1")
    assert client.role("agent").endpoint == "policy" and client.model_for("agent") == "policy"
    assert client.endpoints["policy"].replicas[0].url == "http://policy:2/v1"
    assert client.role("user_sim").endpoint == "local" and client.model_for("critic") == "smollm2-135m"
    assert client.role("agent").temperature == cfg.roles.agent.temperature  # its sampling settings stay
    with pytest.raises(ValueError, match="no policy server"):
        LLMClient(cfg)
    # every other role on a remote endpoint: the unused `embedded` one needs no server
    remote = validate_config(
        {
            "llm": {
                "policy": {"enabled": True},
                "endpoints": {"local": {"urls": ["embedded"]}, "gpu": {"urls": ["http://gpu:8000/v1"]}},
                "roles": {r: {"endpoint": "gpu"} for r in ROLES},
            }
        }
    )
    assert not remote.llm.uses_embedded() and set(LLMClient(remote.llm, policy_url="http://p/v1").endpoints) == {
        "gpu",
        "policy",
    }
    with pytest.raises(ConfigError, match="llm.policy.port"):
        validate_config({"llm": {"policy": {"enabled": True, "port": 8010}}})


def test_eval_config_and_run_ids(tmp_path):
    cfg = validate_config({"eval": {"samples_per_task": 3, "port": 9123}})
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"1")
    m = EvalModel("finetuned", str(folder))
    ecfg = eval_config(cfg, m)
    assert ecfg.llm.policy.enabled and ecfg.llm.policy.model_path == str(folder) and ecfg.llm.policy.port == 9123
    assert (
        ecfg.rollouts.samples_per_task == 3 and cfg.rollouts.samples_per_task == 3 and ecfg.rollouts.reply_attempts == 1
    )
    first = eval_run_id("src", m, ecfg)
    assert first.startswith("src-eval-finetuned-") and first == eval_run_id("src", m, ecfg)
    os.utime(folder / "model.safetensors", ns=(1, 1))  # retrained into the same folder: a new eval run
    assert eval_run_id("src", m, ecfg) != first
    check_servable(m, "llamacpp")  # an HF folder: llama.cpp serves it converted to a GGUF
    native = eval_config(cfg, m, "native")
    assert native.llm.roles.agent.tool_call_mode == "native" and native.rollouts.require_tool == "never"
    assert (
        not native.llm.roles.agent.grounded and not ecfg.llm.roles.agent.grounded
    )  # the model under test picks its own arguments
    with pytest.raises(ValueError, match="no such folder"):
        check_servable(EvalModel("x", str(tmp_path / "nope")), "vllm")


def test_finetune_and_eval_sections_do_not_change_the_run_id():
    a = validate_config({})
    assert (
        validate_config({"finetune": {"max_steps": 1}, "eval": {"samples_per_task": 1}}).config_hash()
        == a.config_hash()
    )
    assert validate_config({"llm": {"policy": {"enabled": True}}}).config_hash() != a.config_hash()


def test_the_eval_report_shows_models_side_by_side(tmp_path):
    rows = [
        ModelEval(
            eval_run_id=f"r{i}",
            label=label,
            model_path=p,
            engine="vllm",
            tasks=2,
            samples_per_task=2,
            trajectories=4,
            passed=i,
            pass_rate=i / 4,
            pass_hat={"1": i / 4, "2": i / 8},
            tool_calls=5,
            valid_tool_calls=4 + i,
            tool_call_validity=(4 + i) / 5,
            format_rate=0.5 + i / 4,
            by_family={"lookup": [i, 2], "update": [0, 2]},
        )
        for i, (label, p) in enumerate([("base", ""), ("finetuned", "data/models/x/model")])
    ]
    out = write_eval_report("src", rows, tmp_path / "eval.html")
    page = out.read_text()
    # by family, with Wilson intervals (1 of 2: 0.09-0.91), and the format row apart from them
    assert "pass: lookup</th><td>0/2  0.00 (0.00–0.66)</td><td>1/2  0.50 (0.09–0.91)</td>" in page
    assert "calls all parse (format)</th><td>0.500</td><td>0.750</td>" in page
    assert page.count("<svg") == 2 and 'id="plot-families"' in page
    assert "<svg" in page and "pass^2" in page and "data/models/x/model" in page and "packaged SmolLM2" in page
    assert ">0.250<" in page and ">1.000<" in page  # finetuned pass rate, finetuned validity


def test_the_base_is_served_at_the_tuned_models_precision(tmp_path):
    """The eval once served the packaged 4-bit GGUF as the base and an f16 conversion of each tuned model, so a
    gap between them mixed training with quantisation. The base now goes the tuned models' way: de-quantised into
    an HF folder (what training starts from), then converted to an f16 GGUF."""
    from gguf import GGMLQuantizationType, GGUFReader

    from worldsmith.llm.server import packaged_gguf

    def matrices(path):
        return {t.tensor_type for t in GGUFReader(path).tensors if len(t.shape) == 2}

    assert matrices(packaged_gguf()) - {GGMLQuantizationType.F16, GGMLQuantizationType.F32}  # the wheel's: quantised
    cfg = validate_config(
        {"llm": {"server": {"model_cache_dir": str(tmp_path / "cache")}}, "eval": {"engine": "llamacpp"}}
    )
    served = served_as(cfg, EvalModel("base", None), log=lambda m: None)
    assert served.path.endswith(".gguf") and matrices(served.path) == {GGMLQuantizationType.F16}
    folder = next((tmp_path / "cache").glob("*-dense"))
    stamp = (folder / "model.safetensors").stat().st_mtime_ns
    assert served_as(cfg, EvalModel("base", None), log=lambda m: None) == served  # de-quantised and converted once
    assert (folder / "model.safetensors").stat().st_mtime_ns == stamp
    as_packaged = cfg.model_copy(update={"eval": cfg.eval.model_copy(update={"equal_precision": False})})
    assert served_as(as_packaged, EvalModel("base", None)).path is None  # the packaged GGUF, as it is


# ------------------------------------------------------------------ end to end, real engines


@pytest.mark.engine
@pytest.mark.vllm
@pytest.mark.slow
def test_finetune_then_eval_serves_the_new_model_with_vllm(tmp_path, project_root):
    """`worldsmith finetune` (1 step on SmolLM2) then `worldsmith eval`: the base and the
    fine-tuned folder each served by vLLM as the agent policy on the held-out task, the
    simulators and critic on llama.cpp; figures per model in the `evals` view and the report."""
    data = tmp_path / "data"
    source = RunStore(data, "src")
    tools = order_tools()
    source.append(tools)
    source.append([order_agent(tools)])
    source.append([cancel_task()])
    trajs, tasks, agents, verdicts = world(3, 1)
    examples, _ = build_examples("src", ExportConfig(validation_fraction=0.0), trajs, verdicts, tasks, agents)
    write_export(examples, data / "exports" / "src", "card")

    cfg = yaml.safe_load((project_root / "pipeline.yaml").read_text())
    cfg["run"].update(data_dir=str(data), prompts_dir=str(project_root / "prompts"))
    for key in ("snapshot_dir", "servers_file"):  # relative paths are taken from the config's folder
        cfg["tools"][key] = str(project_root / cfg["tools"][key])
    cfg["worlds"]["taxonomy_file"] = str(project_root / cfg["worlds"]["taxonomy_file"])
    cfg["llm"]["server"].update(
        port=free_port(), parallel=4, vllm_python=str(project_root / ".venv-vllm" / "bin" / "python")
    )
    cfg["rollouts"].update(
        max_turns=2, max_tool_calls=2, max_tokens=1500, real_execution={"enabled": False}, faults={"enabled": False}
    )
    cfg["export"]["out_dir"] = str(data / "exports")
    cfg["finetune"].update(
        out_dir=str(data / "models"), name="ft", max_steps=1, batch_size=1, max_length=1024, eval_every=1, save_every=1
    )
    cfg["eval"].update(
        samples_per_task=2, port=free_port(), engine="vllm", modes=["constrained"]
    )  # vLLM serves the folder as it is
    config = tmp_path / "pipeline.yaml"
    config.write_text(yaml.safe_dump(cfg))
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}

    def cli(*args: str, timeout: int) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "worldsmith.cli", *args, "-c", str(config)],
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
        )

    ft = cli("finetune", "--run-id", "src", timeout=600)
    assert ft.returncode == 0, ft.stderr[-3000:]
    model = data / "models" / "ft" / "model"
    assert (model / "model.safetensors").exists() and json.loads((model.parent / "train.json").read_text())[
        "dataset"
    ].endswith("exports/src")

    ev = cli("eval", "--run-id", "src", "--model", str(model), timeout=1500)
    assert ev.returncode == 0, ev.stdout[-3000:] + ev.stderr[-4000:]
    assert (
        "base" in ev.stdout and "finetuned" in ev.stdout and "pass^2" in ev.stdout and "1 held-out task(s)" in ev.stderr
    )

    evals = {e.label: e for e in source.read(ModelEval)}
    assert set(evals) == {"base", "finetuned"} and evals["finetuned"].model_path == str(model)
    for e in evals.values():
        assert e.trajectories == 2 and e.tasks == 1 and set(e.pass_hat) == {"1", "2"}
        run_trajs = RunStore(data, e.eval_run_id).read(Trajectory)
        assert {t.task_id for t in run_trajs} == {"tsk_cancel"} and all(t.model == "policy" for t in run_trajs)
        # the agent's calls went to the policy server and were answered (or the failure recorded)
        assert sum(t.usage.get("agent", {}).get("calls", 0) for t in run_trajs) >= 2
    assert evals["base"].eval_run_id != evals["finetuned"].eval_run_id
    # the fine-tuned folder is what vLLM served: its own log names it
    logs = "".join(p.read_text(errors="replace") for p in (data / "logs").glob("server-vllm-*.log"))
    assert f"--model {model}" in logs
    assert (data / "runs" / "src" / "eval.html").read_text().count("<svg") == 2  # the rates, and by family
    # nothing is left serving on the policy port
    with pytest.raises(httpx.HTTPError):
        httpx.get(f"http://127.0.0.1:{cfg['eval']['port']}/health", timeout=2)


def test_eval_plan_defaults_to_the_runs_finetune_output_and_its_dataset(tmp_path):
    from worldsmith.evaluate.play import eval_plan

    cfg = validate_config({"finetune": {"name": "ft"}})
    models, source = eval_plan(cfg, tmp_path)
    assert [(m.label, m.path) for m in models] == [
        ("base", None),
        ("finetuned", str(tmp_path / "data" / "models" / "ft" / "model")),
    ]
    assert source == tmp_path / "data" / "exports" / cfg.default_run_id()
    (tmp_path / "data" / "models" / "ft").mkdir(parents=True)
    (tmp_path / "data" / "models" / "ft" / "train.json").write_text(json.dumps({"dataset": "/elsewhere/export"}))
    models, source = eval_plan(cfg, tmp_path, label="mine", compare_base=False)
    assert [m.label for m in models] == ["mine"] and str(source) == "/elsewhere/export"
