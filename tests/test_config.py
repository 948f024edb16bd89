from __future__ import annotations

import pytest
import yaml

from worldsmith.config import ConfigError, PipelineConfig, apply_overrides, load_config, validate_config


def problems(raw) -> list[str]:
    with pytest.raises(ConfigError) as info:
        validate_config(raw)
    return info.value.problems


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (
            {"llm": {"roles": {"critic": {"temperature": "hot"}}}},
            'llm.roles.critic.temperature: got "hot", expected a number between 0 and 2',
        ),
        (
            {"llm": {"roles": {"critic": {"temperature": 2.5}}}},
            "llm.roles.critic.temperature: got 2.5, expected a number between 0 and 2",
        ),
        (
            {"llm": {"roles": {"agent": {"top_p": -0.1}}}},
            "llm.roles.agent.top_p: got -0.1, expected a number between 0 and 1",
        ),
        ({"run": {"seed": -3}}, "run.seed: got -3, expected an integer >= 0"),
        ({"smoke": {"requests": 0}}, "smoke.requests: got 0, expected an integer >= 1"),
        ({"smoke": {"requests": "many"}}, 'smoke.requests: got "many", expected an integer >= 1'),
        ({"smoke": {"enabled": "maybe"}}, 'smoke.enabled: got "maybe", expected true or false'),
        ({"llm": {"server": {"engine": "tgi"}}}, 'llm.server.engine: got "tgi", expected one of "llamacpp", "vllm"'),
        ({"llm": {"server": {"port": 70000}}}, "llm.server.port: got 70000, expected an integer between 1 and 65535"),
        (
            {"llm": {"roles": {"agent": {"tool_call_mode": "magic"}}}},
            'llm.roles.agent.tool_call_mode: got "magic", expected one of "native", "constrained"',
        ),
        (
            {"llm": {"endpoints": {"local": {"urls": []}}}},
            "llm.endpoints.local.urls: got [], expected a list with at least 1 item(s)",
        ),
        (
            {"llm": {"endpoints": {"local": {"timeout_s": 0}}}},
            "llm.endpoints.local.timeout_s: got 0, expected a number > 0",
        ),
        (
            {"llm": {"roles": {"agent": {"endpoint": "gpu"}}}},
            "llm.roles.agent.endpoint: got 'gpu', expected one of the names under llm.endpoints (local)",
        ),
    ],
)
def test_bad_values_name_key_value_and_expectation(raw, expected):
    assert expected in problems(raw)


def test_unknown_keys_are_refused_with_the_known_ones():
    found = problems({"run": {"sede": 1}, "bogus_section": {}})
    assert any(p.startswith("run.sede: unknown key; known keys here: name, seed") for p in found)
    assert any(p.startswith("bogus_section: unknown key") for p in found)


def test_all_problems_reported_at_once():
    assert len(problems({"run": {"seed": -1}, "smoke": {"requests": 0, "enabled": "x"}})) == 3


def test_shipped_pipeline_yaml_is_valid(project_root):
    cfg, root = load_config(project_root / "pipeline.yaml")
    assert root == project_root
    assert cfg.llm.roles.agent.tool_call_mode == "constrained"


def test_overrides_are_applied_and_validated(project_root):
    cfg, _ = load_config(
        project_root / "pipeline.yaml", ["smoke.requests=7", "llm.roles.critic.temperature=0.25", "run.name=exp"]
    )
    assert (cfg.smoke.requests, cfg.llm.roles.critic.temperature, cfg.run.name) == (7, 0.25, "exp")
    with pytest.raises(ConfigError, match=r"llm.roles.critic.temperature: got \"hot\""):
        load_config(project_root / "pipeline.yaml", ["llm.roles.critic.temperature=hot"])
    with pytest.raises(ConfigError, match="expected KEY.PATH=VALUE"):
        load_config(project_root / "pipeline.yaml", ["smoke.requests"])


def test_override_parses_yaml_scalars_and_lists():
    raw = apply_overrides({"a": {"b": 1}}, ["a.b=false", "a.c=[x, y]", "a.d=3.5"])
    assert raw == {"a": {"b": False, "c": ["x", "y"], "d": 3.5}}


def test_hash_is_stable_and_changes_with_content():
    a, b = PipelineConfig(), PipelineConfig()
    assert a.config_hash() == b.config_hash()
    b.run.seed = 99
    assert a.config_hash() != b.config_hash()


def test_a_later_key_left_null_keeps_the_run_ids_of_runs_made_before_it():
    """llm.policy.parallel came after runs existed; null (the old behaviour) must leave their ids, so they resume.
    The hash is that of the config's canonical JSON without the execution keys (spelled out here)."""
    import hashlib
    import json

    cfg = PipelineConfig()
    data = {k: v for k, v in cfg.resolved().items() if k not in ("finetune", "eval", "rl")}
    data["run"] = {k: v for k, v in data["run"].items() if k not in ("executor", "ray_address", "ray_cpus_per_shard")}
    del data["llm"]["policy"]["parallel"]  # as it was before the key existed
    del data["llm"]["server"]["threads_batch"]  # the same: null is the server as it ran before
    del data["judge"]["reward"]  # the RL reward's weights, at their defaults
    del data["coding"]  # the coding slice, at its defaults (it came after runs were made)
    del data["llm"]["server"]["max_tokens"]  # a serving default: the pipeline sends its own max_tokens
    data["tools"]["bundles"] = {k: v for k, v in data.pop("bundles").items() if k != "enabled"}  # where it was
    before = hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:12]
    assert cfg.config_hash() == before
    assert validate_config({"llm": {"policy": {"parallel": 4}}}).config_hash() != before
    assert validate_config({"llm": {"server": {"threads_batch": 2}}}).config_hash() != before
    assert validate_config({"llm": {"server": {"max_tokens": 0}}}).config_hash() == before
    assert (
        validate_config({"judge": {"reward": {"format": 0.5}}}).config_hash() != before
    )  # a changed reward: a new run
    assert validate_config({"rl": {"iterations": 9}}).config_hash() == before  # rl only reads the run
    assert validate_config({"coding": {"enabled": True}}).config_hash() != before  # the coding slice: a new run


def test_bundles_switch_off_alone():
    """The bundles stage has its own section: `bundles.enabled: false` skips it and no other stage. (Runs made
    when its keys were tools.bundles keep their ids: the test above spells out the hash.)"""
    from worldsmith.pipeline import select_stages

    on = [s.name for s in select_stages(PipelineConfig())]
    off = validate_config({"bundles": {"enabled": False}})
    assert [s.name for s in select_stages(off)] == [n for n in on if n != "bundles"]
    assert off.config_hash() != PipelineConfig().config_hash()
    with pytest.raises(ConfigError, match="tools.bundles: unknown key"):
        validate_config({"tools": {"bundles": {"count": 3}}})


@pytest.mark.parametrize(
    "raw, key",
    [
        ({"llm": {"server": {"parallel": 32}}}, "llm.server.parallel: got 32"),
        ({"llm": {"policy": {"enabled": True, "engine": "llamacpp", "parallel": 32}}}, "llm.policy.parallel: got 32"),
        ({"llm": {"server": {"engine": "vllm", "parallel": 32}}, "eval": {"parallel": 32}}, "eval.parallel: got 32"),
    ],
)
def test_llamacpp_sequences_that_would_overflow_their_share_of_its_context_are_refused(raw, key):
    with pytest.raises(ConfigError, match=key + r".*1024 tokens each.*expected at most 16.*ctx_size to 65536"):
        validate_config(raw)


def test_llamacpp_sequences_that_fit_are_accepted():
    assert validate_config({"llm": {"server": {"parallel": 32, "ctx_size": 65536}}}).llm.server.parallel == 32
    assert validate_config({"llm": {"server": {"engine": "vllm", "parallel": 64}}}).llm.server.parallel == 64
    remote = {"llm": {"server": {"parallel": 32}, "endpoints": {"local": {"urls": ["http://gpu:8000/v1"]}}}}
    assert validate_config(remote).llm.server.parallel == 32  # no embedded server is started: nothing to size


def test_bad_yaml_and_missing_file(tmp_path):
    bad = tmp_path / "p.yaml"
    bad.write_text("run: [unclosed")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad)
    with pytest.raises(ConfigError, match="file not found"):
        load_config(tmp_path / "missing.yaml")
    bad.write_text(yaml.safe_dump(["a", "list"]))
    with pytest.raises(ConfigError, match="expected a mapping"):
        load_config(bad)


def test_cli_reports_bad_config_before_any_work(tmp_path, project_root):
    import subprocess
    import sys

    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "worldsmith.cli",
            "synth",
            "-c",
            str(project_root / "pipeline.yaml"),
            "--set",
            "llm.roles.critic.temperature=hot",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
    )
    assert proc.returncode == 2
    assert 'llm.roles.critic.temperature: got "hot", expected a number between 0 and 2' in proc.stderr
    assert not (tmp_path / "data").exists()


def _leaves(node, path=""):
    if isinstance(node, dict) and node:
        for k, v in node.items():
            yield from _leaves(v, f"{path}.{k}" if path else k)
    else:
        yield path, node


def test_pipeline_yaml_is_the_code_defaults_written_out(project_root):
    """One set of defaults: the shipped pipeline.yaml states every key, each with the value the
    code would use without it, so a benchmark or a test that builds a config in code runs what
    `make synth` runs. Changing a default means changing both, or this fails."""
    shipped, _ = load_config(project_root / "pipeline.yaml")
    code = dict(_leaves(PipelineConfig().resolved()))
    drift = [f"{k}: yaml {v!r}, code {code.get(k)!r}" for k, v in _leaves(shipped.resolved()) if code.get(k) != v]
    assert drift == [], "pipeline.yaml and config.py disagree:\n" + "\n".join(drift)
    raw = yaml.safe_load((project_root / "pipeline.yaml").read_text())
    # roles are one-line mappings in the file: a key it leaves out there is RoleConfig's default
    # (the drift check covers the values)
    missing = [
        k
        for k, _ in _leaves(PipelineConfig().resolved())
        if k not in dict(_leaves(raw)) and not k.startswith("llm.roles.")
    ]
    assert missing == [], f"keys pipeline.yaml does not state: {missing}"


def test_on_and_off_from_the_command_line_are_words_not_booleans(project_root):
    """YAML reads a bare `off` as false: `--set eval.grounding=off` failed with 'got false' (benchmarks/loop.py did)."""
    from worldsmith.config import load_config

    cfg, _ = load_config(project_root / "pipeline.yaml", ["eval.grounding=off", "llm.roles.agent.grounding=off"])
    assert cfg.eval.grounding == "off" and cfg.llm.roles.agent.grounding == "off"
    cfg, _ = load_config(project_root / "pipeline.yaml", ["eval.grounding=on"])
    assert cfg.eval.grounding == "on"


def test_two_llamacpp_servers_split_the_cores_and_keep_threads_a_user_set(monkeypatch):
    """Eval runs the policy's llama.cpp server beside the simulators' one; with every core each,
    their threads fought and an episode took ~5 minutes on 2 cores."""
    import os

    from worldsmith.llm.server import share_cores

    cfg = validate_config({"llm": {"policy": {"enabled": True, "model_path": "x.gguf", "engine": "llamacpp"}}})
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    main, policy = share_cores(cfg.llm.server, cfg.llm.policy_server())
    assert (main.threads, policy.threads) == (1, 1)
    monkeypatch.setattr(os, "cpu_count", lambda: 5)
    main, policy = share_cores(cfg.llm.server, cfg.llm.policy_server())
    assert (main.threads, policy.threads) == (3, 2)
    set_by_user = cfg.llm.server.model_copy(update={"threads": 4})
    assert share_cores(set_by_user, cfg.llm.policy_server())[0].threads == 4
    vllm = cfg.llm.policy_server().model_copy(update={"engine": "vllm"})
    assert share_cores(cfg.llm.server, vllm) == (cfg.llm.server, vllm)


def test_prose_replies_auto_is_on_where_llama_cpp_serves_the_agent():
    """`llm.roles.agent.prose_replies: auto` (the default): the prose grammar where worldsmith serves the agent with
    llama.cpp, not with vLLM (its xgrammar cannot compile it) nor on an outside endpoint whose engine is unknown."""
    assert validate_config({}).llm.prose_replies("agent")
    assert not validate_config({"llm": {"server": {"engine": "vllm"}}}).llm.prose_replies("agent")
    outside = {"endpoints": {"local": {"urls": ["http://10.0.0.2:8000/v1"]}}}
    assert not validate_config({"llm": outside}).llm.prose_replies("agent")
    assert validate_config({"llm": {**outside, "roles": {"agent": {"prose_replies": "on"}}}}).llm.prose_replies("agent")
    policy = {"policy": {"enabled": True, "engine": "vllm", "port": 8123}}
    assert not validate_config({"llm": policy}).llm.prose_replies("agent")


def test_the_server_threads_and_llama_cpps_batch_split_reach_the_engine(tmp_path):
    """llm.server.threads (0: all cores, the default) and threads_batch (null: as threads) are the llama.cpp
    server's generation and prompt threads: the split (N-1 and N) leaves a core to other work while generating."""
    from worldsmith.config import ServerConfig
    from worldsmith.llm.server import ModelServer

    def threads(**kw):
        cmd = ModelServer(ServerConfig(**kw), tmp_path, tmp_path).command()
        return cmd[cmd.index("--threads") + 1], cmd[cmd.index("--threads-batch") + 1]

    assert PipelineConfig().llm.server.threads == 0 and PipelineConfig().llm.server.threads_batch is None
    assert threads() == ("0", "0")  # llama.cpp's own default, as before the key existed
    assert threads(threads=1, threads_batch=2) == ("1", "2")
