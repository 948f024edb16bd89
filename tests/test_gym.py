"""The RL environment: a pack world's blueprint task played step by step from outside, its tool calls run
by code on the seeded world, the episode ended by the user simulator or a limit, and the judge's reward by
component. The same messages played by the rollouts stage's own loop give the same episode."""

from __future__ import annotations

import asyncio
import json

import pytest
from test_families import PACKS, drafts, gold, task_of
from test_rollouts import PROMPTS, ScriptedClient, user_says

from worldsmith.config import PipelineConfig
from worldsmith.gym import SyncToolEnv, TaskSet, ToolEnv
from worldsmith.records import Agent
from worldsmith.rollouts.episode import run_episode


def config(**rollouts) -> PipelineConfig:
    return PipelineConfig.model_validate(
        {
            "rollouts": {"faults": {"enabled": False}, "real_execution": {"enabled": False}, **rollouts},
            "judge": {"critic": False, "require_judge_criteria": False},
        }
    )


def pack_agent(pack: str, agent_id: str = "a", system_prompt: str | None = None) -> Agent:
    """An agent over all of a pack's tools, acting on its world."""
    p = PACKS[pack]
    return Agent(
        agent_id=agent_id,
        bundle_id=f"bnd_{agent_id}",
        system_prompt=system_prompt or f"You are the {pack} assistant.",
        tool_ids=[t.tool_id for t in p.tools],
        domain=pack,
        world_id=p.world.world_id,
        style="terse expert",
        strictness="standard",
    )


def setup(pack: str = "shop", difficulty: str = "single_call"):
    """A task set of one blueprint task on a seeded pack world, with its gold chain."""
    p = PACKS[pack]
    d = drafts(pack, difficulty, 1)[0]
    task = task_of(p.world, d)
    agent = pack_agent(pack)
    ts = TaskSet({task.task_id: task}, {"a": agent}, {t.tool_id: t for t in p.tools}, {p.world.world_id: p.world})
    return ts, task, gold(d)


def play(env: SyncToolEnv, task_id: str, steps: list):
    obs, info = env.reset(task_id)
    out = None
    for message in steps:
        out = env.step(message)
        if out.terminated or out.truncated:
            break
    return obs, info, out


def done(chain) -> str:
    """The agent's last reply: what it did, naming the record (a change is confirmed to the user naming it)."""
    return f"Done: I have taken care of {', '.join(str(v) for v in chain[-1][1].values())} for you."


def calls(chain):
    return [{"tool_calls": [{"function": {"name": n, "arguments": a}}]} for n, a in chain]


def test_the_gold_chain_played_through_the_env_earns_the_verifiable_reward():
    ts, task, chain = setup()
    client = ScriptedClient(user_sim=user_says(("Thanks, that is all.", "stop")))
    env = SyncToolEnv(ToolEnv(ts, client, PROMPTS, config()))
    obs, info, out = play(env, task.task_id, [*calls(chain), done(chain)])
    assert [m["role"] for m in obs.messages] == ["system", "user"] and obs.messages[1][
        "content"
    ] == task.user_goal.request
    assert {t["function"]["name"] for t in obs.tools} >= {n for n, _ in chain}
    assert out.terminated and not out.truncated and out.info["status"] == "finished"
    r = out.info["reward"]
    assert r["verifiable"] == 1.0 and r["verifiable_fraction"] == 1.0 and r["format"] == 1.0, r
    assert out.reward == pytest.approx(r["total"]) and out.reward >= 1.0
    traj = env.trajectory()
    assert [c.executor for c in traj.calls] == ["code"] * len(chain) and all(c.ok for c in traj.calls)
    assert traj.world_states.final != traj.world_states.initial  # the gold chain changed the seeded world
    assert out.info["verdict"].passed


def test_a_wrong_call_a_malformed_call_and_an_overrun_each_cost_their_component():
    ts, task, chain = setup()
    (name, args), *_ = chain
    key = next(iter(args))
    wrong = [(name, {**args, key: "no-such-record"})]
    env = SyncToolEnv(ToolEnv(ts, ScriptedClient(user_sim=user_says(("Thanks.", "stop"))), PROMPTS, config()))
    *_, out = play(env, task.task_id, [*calls(wrong), "Done."])
    assert out.info["reward"]["verifiable"] == 0.0 and out.info["reward"]["verifiable_fraction"] < 1.0
    # a tool the bundle does not have: the format component falls, the episode goes on
    env = SyncToolEnv(ToolEnv(ts, ScriptedClient(user_sim=user_says(("Thanks.", "stop"))), PROMPTS, config()))
    env.reset(task.task_id)
    step = env.step({"tool_calls": [{"function": {"name": "launch_rocket", "arguments": {}}}]})
    assert not (step.terminated or step.truncated) and step.info["new_messages"][0]["role"] == "tool"
    for message in [*calls(chain), done(chain)]:
        out = env.step(message)
    assert out.info["reward"]["format"] == pytest.approx(len(chain) / (len(chain) + 1))
    # and the judge's unknown_tool check holds it against the verifiable reward too
    assert out.info["reward"]["verifiable"] == 0.0 and "hack:unknown_tool" in out.info["verdict"].reasons
    # the same gold chain at ten times the task's token budget
    env = SyncToolEnv(ToolEnv(ts, ScriptedClient(user_sim=user_says(("Thanks.", "stop"))), PROMPTS, config()))
    env.reset(task.task_id)
    budget = 256 * (len(chain) + 1)
    for message in [*calls(chain), done(chain)]:
        out = env.step(message, tokens=10 * budget)
    assert out.info["reward"]["budget"] == -1.0 and out.info["reward"]["budget_tokens"] == budget
    assert out.reward == pytest.approx(1.0 + 0.1 * 1.0 - 0.1)


def test_a_limit_truncates_the_episode():
    ts, task, chain = setup()
    env = SyncToolEnv(ToolEnv(ts, ScriptedClient(), PROMPTS, config(max_agent_steps_per_turn=2)))
    env.reset(task.task_id)
    name, args = chain[0]
    read = {"tool_calls": [{"function": {"name": name, "arguments": args}}]}
    first = env.step(read)
    assert not (first.terminated or first.truncated)
    out = env.step(read)
    assert out.truncated and not out.terminated and out.info["status"] == "max_tool_calls"
    with pytest.raises(RuntimeError, match="over"):
        env.step("more")


def test_the_env_and_the_rollouts_loop_play_the_same_episode():
    """One turn logic: the rollouts stage's policy sampling the gold chain, and a trainer stepping it in."""
    ts, task, chain = setup()
    reply = done(chain)
    agent_script = [[(n, a)] for n, a in chain] + [reply]
    ep = ts.episode(task.task_id)
    client = ScriptedClient(agent=agent_script, user_sim=user_says(("Thanks.", "stop")))
    cfg = config(reply_uses_result=False)  # the script has one reply: none is sampled again
    played = asyncio.run(run_episode(ep, client, PROMPTS, cfg.rollouts, None, ts.worlds))
    assert played.status == "finished", played.reason
    env = SyncToolEnv(ToolEnv(ts, ScriptedClient(user_sim=user_says(("Thanks.", "stop"))), PROMPTS, cfg))
    env.reset(task.task_id)
    for m in played.messages:
        if m["role"] == "assistant":
            env.step(m)
    stepped = env.trajectory()
    assert stepped.trajectory_id == played.trajectory_id and stepped.seed == played.seed
    assert json.dumps(stepped.messages) == json.dumps(played.messages)
    assert stepped.world_states == played.world_states and stepped.status == played.status == "finished"
    assert [c.arguments for c in stepped.calls] == [c.arguments for c in played.calls]


def test_an_unknown_task_or_a_step_before_reset_says_so():
    ts, task, _ = setup()
    env = SyncToolEnv(ToolEnv(ts, ScriptedClient(), PROMPTS, config()))
    with pytest.raises(RuntimeError, match="reset"):
        env.step("hello")
    with pytest.raises(KeyError, match="no task"):
        env.reset("tsk_missing")


# ------------------------------------------------------------------ TRL's environment mode


def trl_tasks(pack="shop"):
    from worldsmith.gym.trl import TRLTasks

    ts, task, chain = setup(pack)
    return TRLTasks(ts, config(), PROMPTS), task, chain


@pytest.mark.parametrize("pack", sorted(PACKS))
def test_every_pack_tool_renders_for_trl_as_its_schema_says(pack):
    """TRL renders an environment's methods with transformers' get_json_schema: the names, required
    parameters, top-level types and enums must be the tool's own."""
    from transformers.utils import get_json_schema

    tasks, _, _ = trl_tasks(pack)
    (factory,) = tasks.environment_factories().values()
    env = factory()
    tools = tasks.taskset.toolset(next(iter(tasks.taskset.agents.values()))).tools
    assert tools
    for tool in tools:
        fn = tool["function"]
        got = get_json_schema(getattr(env, fn["name"]))["function"]
        want = fn["parameters"]
        assert got["name"] == fn["name"]
        assert set(got["parameters"]["properties"]) == set(want.get("properties", {}))
        assert set(got["parameters"].get("required", [])) == set(want.get("required", []))
        for prop, schema in want.get("properties", {}).items():
            if isinstance(schema.get("type"), str):
                assert got["parameters"]["properties"][prop]["type"] == schema["type"], (fn["name"], prop)
            if "enum" in schema:
                assert got["parameters"]["properties"][prop]["enum"] == schema["enum"]


def test_trl_environment_methods_play_the_gold_chain_and_the_rewards_come_by_component():
    tasks, task, chain = trl_tasks()
    row = tasks.dataset()[0]
    assert row["task_id"] == task.task_id and row["prompt"][1]["content"] == task.user_goal.request
    env = tasks.environment_factories()[row["environment"]]()
    assert env.reset(**row) is None
    results = [getattr(env, name)(**args) for name, args in chain]  # as TRL calls a tool: keyword arguments
    assert all(isinstance(r, str) and r for r in results)
    completion = [{"role": "assistant", "content": done(chain)}]
    funcs = tasks.reward_funcs()
    got = {f.__name__: f([completion], [env])[0] for f in funcs}
    assert got["worldsmith_verifiable"] == 1.0 and got["worldsmith_format"] == 1.0, got
    assert got["worldsmith_rubric"] is None  # no critic: TRL leaves the function out for this rollout
    assert len(tasks.reward_weights) == len(funcs)
    traj = env._env.trajectory()
    assert [c.executor for c in traj.calls] == ["code"] * len(chain) and traj.status == "finished"
    # a rollout that never did the work earns nothing verifiable
    env.reset(**row)
    assert funcs[0]([[{"role": "assistant", "content": "All done!"}]], [env]) == [0.0]


def test_a_real_grpo_run_steps_on_the_worldsmith_environments(tmp_path):
    """TRL's GRPOTrainer, two steps on a tiny random model: every rollout resets an environment on its
    task, the judge scores it and TRL logs the reward by component."""
    import transformers
    from test_finetune import tiny
    from trl import GRPOConfig, GRPOTrainer

    from worldsmith.finetune.loop import TEMPLATE
    from worldsmith.llm.server import packaged_gguf

    g = packaged_gguf()
    tok = transformers.AutoTokenizer.from_pretrained(str(g.parent), gguf_file=g.name)
    tok.chat_template = TEMPLATE.read_text()
    tok.pad_token = tok.pad_token or tok.eos_token
    tok.padding_side = "left"
    tasks, task, _ = trl_tasks()
    args = GRPOConfig(
        output_dir=str(tmp_path),
        max_steps=2,
        per_device_train_batch_size=2,
        num_generations=2,
        max_completion_length=16,
        learning_rate=1e-3,
        report_to="none",
        use_cpu=True,
        logging_steps=1,
        save_strategy="no",
        reward_weights=tasks.reward_weights,
        max_tool_calling_iterations=2,
    )
    trainer = GRPOTrainer(
        tiny(tok),
        args=args,
        train_dataset=tasks.dataset(samples=2),
        environment_factory=tasks.environment_factories(),
        reward_funcs=tasks.reward_funcs(),
        processing_class=tasks.tokenizer(tok),
    )
    trainer.train()
    logged = [h for h in trainer.state.log_history if "reward" in h]
    assert len(logged) == 2
    for h in logged:
        # a random model does none of the work: nothing verifiable, its texts parse (no call was made)
        assert h["rewards/worldsmith_verifiable/mean"] == 0.0 and h["rewards/worldsmith_format/mean"] == 1.0
        assert 0.0 <= h["rewards/worldsmith_verifiable_fraction/mean"] < 1.0
    envs = [e for pool in trainer._environment_pool.values() for e in pool]
    judged = [e._env.env.verdict for e in envs]
    assert judged and all(v is not None and v.task_id == task.task_id for v in judged)


# ------------------------------------------------------------------ task sets for other RL stacks


def test_an_exported_task_set_loads_in_datasets_and_rebuilds_the_same_environment(tmp_path):
    import datasets

    from worldsmith.gym.tasksets import SCHEMA, TASKSET_FILE, taskset_from_dataset, write_taskset

    ts, task, chain = setup()
    summary = write_taskset(ts, tmp_path, "run-x")
    assert summary["tasks"] == 1
    ds = datasets.load_dataset("parquet", data_files=str(tmp_path / TASKSET_FILE))["train"]
    row = ds[0]
    assert set(ds.column_names) == set(SCHEMA) and row["task_id"] == task.task_id
    assert [(c["name"], c["arguments"]) for c in json.loads(row["gold_calls"])] == [(n, a) for n, a in chain]
    assert "| `world` |" in (tmp_path / "README.md").read_text()
    # the gold chain stepped in an environment rebuilt from the dataset alone
    loaded = taskset_from_dataset(ds)
    env = SyncToolEnv(ToolEnv(loaded, ScriptedClient(user_sim=user_says(("Thanks.", "stop"))), PROMPTS, config()))
    obs, _ = env.reset(row["task_id"])
    assert obs.messages == row["prompt"] and obs.tools == json.loads(row["tools"])
    gold_calls = [(c["name"], c["arguments"]) for c in json.loads(row["gold_calls"])]
    for message in [*calls(gold_calls), done(gold_calls)]:
        out = env.step(message)
    assert out.info["reward"]["verifiable"] == 1.0
