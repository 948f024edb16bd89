"""The RL stage's parts: k1.5's loss and its gradient, K2.5's log-ratio mask, the group baseline, the pass@k = 0
curriculum, the temperature schedule; and (engine) `worldsmith rl` end to end on pack tasks with a real served
policy, resumed."""

from __future__ import annotations

import json

import pytest
import torch
import transformers
from test_finetune import tiny

from worldsmith.config import RLConfig
from worldsmith.finetune.loop import TEMPLATE
from worldsmith.finetune.muon import make_optimizer
from worldsmith.records import Reward, Task, Trajectory, Verdict
from worldsmith.rl.loop import (
    Curriculum,
    Played,
    advantages,
    engine_logprobs,
    k15_loss,
    temperature_at,
    token_logprobs,
    update,
)


@pytest.fixture(scope="module")
def tokenizer():
    from worldsmith.llm.server import packaged_gguf

    g = packaged_gguf()
    tok = transformers.AutoTokenizer.from_pretrained(str(g.parent), gguf_file=g.name)
    tok.chat_template = TEMPLATE.read_text()
    tok.pad_token = tok.pad_token or tok.eos_token
    return tok


def encoded(tok, reply: str) -> dict:
    from worldsmith.finetune.data import encode

    messages = [{"role": "user", "content": "Is order o-1 open?"}, {"role": "assistant", "content": reply}]
    return encode(tok, {"messages": messages, "tools": []}, 256)


def test_the_first_step_of_k15_is_a_policy_gradient_whose_sign_follows_the_advantage(tokenizer):
    """At pi = pi_ref the loss's gradient is -2 tau A grad log pi: an episode better than its task's mean becomes
    likelier, a worse one less likely, by one optimizer step."""
    cfg = RLConfig(updates_per_iteration=1, batch_size=1, tau=0.5, logratio_mask=None, lr=1e-2, muon_lr=5e-2)
    good = encoded(tokenizer, "Yes, o-1 is open.")
    for advantage, sign in ((1.0, 1), (-1.0, -1)):
        model = tiny(tokenizer)
        ids, labels = torch.tensor(good["input_ids"]), torch.tensor(good["labels"])
        with torch.no_grad():
            before = token_logprobs(model, ids, labels).sum().item()
        opt = make_optimizer(model, "adamw", lr=cfg.lr, weight_decay=0.0)
        stats = update(model, opt, [(good, advantage)], cfg, "cpu")
        with torch.no_grad():
            after = token_logprobs(model, ids, labels).sum().item()
        assert stats["steps"] == 1 and stats["loss"][0] == pytest.approx(advantage**2)
        assert sign * (after - before) > 0.5, (advantage, before, after)


def test_the_loss_is_k15s_square_and_the_mask_drops_tokens_that_moved_too_far():
    ref = torch.zeros(4)
    logp = torch.tensor([0.1, 2.0, -3.0, 0.2], requires_grad=True)
    loss, masked = k15_loss(logp, ref, advantage=0.5, tau=0.1, bound=1.0)
    # only the two tokens within the bound count: log-ratio 0.3
    assert masked == 2 and loss.item() == pytest.approx((0.5 - 0.1 * 0.3) ** 2)
    loss.backward()
    assert logp.grad[1] == 0 and logp.grad[2] == 0 and logp.grad[0] != 0  # masked tokens get no gradient
    unmasked, none = k15_loss(logp.detach(), ref, advantage=0.5, tau=0.1, bound=None)
    assert none == 0 and unmasked.item() == pytest.approx((0.5 - 0.1 * (0.1 + 2.0 - 3.0 + 0.2)) ** 2)


def test_the_mask_compares_with_the_engines_logprobs_where_it_has_them():
    """K2.5 masks tokens whose training log-probability left the rollout's: the engine's where known (NaN: the
    reference's). At the first step the trainer equals its reference, so only the engine can mask a token."""
    ref = torch.tensor([-1.0, -1.0, -1.0])
    logp = ref.clone().requires_grad_()
    engine = torch.tensor([-1.2, -3.5, float("nan")])  # the second token: the engine sampled it 2.5 nats likelier
    loss, masked = k15_loss(logp, ref, advantage=0.5, tau=0.1, bound=1.0, logp_rollout=engine)
    assert masked == 1 and loss.item() == pytest.approx(0.25)
    loss.backward()
    assert logp.grad[1] == 0 and logp.grad[0] != 0 and logp.grad[2] != 0
    assert k15_loss(logp.detach(), ref, 0.5, 0.1, 1.0)[1] == 0  # without the engine's: nothing moved yet
    # a token the engine did not sample (NaN: a tool call the template re-rendered) is left out under "drop"
    logp.grad = None
    dropped, left_out = k15_loss(logp, ref, 0.5, 0.1, 1.0, logp_rollout=engine, unsampled="drop")
    assert left_out == 2 and dropped.item() == pytest.approx(0.25)
    dropped.backward()
    assert logp.grad[2] == 0 and logp.grad[0] != 0
    assert k15_loss(logp.detach(), ref, 0.5, 0.1, 1.0, unsampled="drop")[1] == 0  # no engine log-probs: all kept


def test_the_engines_sampled_tokens_line_up_with_the_trained_tokens(tokenizer):
    """The engine's (token, log-probability) of each agent message land on the same tokens of the trainer's
    encoding; a tool call whose JSON the template renders otherwise, and the end-of-turn token the engine reports
    as empty text, stay unknown (NaN)."""
    reply = "Order o-1 shipped on Tuesday; it should arrive by Friday."
    call = {"id": "c1", "type": "function", "function": {"name": "get_order", "arguments": '{"order_id": "o-1"}'}}
    messages = [
        {"role": "user", "content": "Is order o-1 open?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": '{"status": "shipped"}'},
        {"role": "assistant", "content": reply},
    ]
    pieces = [tokenizer.decode([t]) for t in tokenizer(reply, add_special_tokens=False)["input_ids"]]
    sampled = [(t, -0.01 * (i + 1)) for i, t in enumerate(pieces)] + [("", -0.5)]
    other_json = [("<tool_call>", -0.1), ('{"', -0.2), ("arguments", -0.3), ('":{"', -0.4), ("order", -0.5)]
    traj = Trajectory.model_construct(messages=messages, agent_logprobs={"1": other_json, "3": sampled})
    from worldsmith.finetune.data import encode

    enc = encode(tokenizer, {"messages": messages, "tools": []}, 512)
    got = engine_logprobs(tokenizer, enc, traj)
    trained = [tokenizer.decode([enc["labels"][k]]) for k in range(1, len(enc["labels"])) if enc["labels"][k] != -100]
    assert got is not None and len(got) == len(trained)
    known = [(trained[i], round(v, 4)) for i, v in enumerate(got.tolist()) if v == v]
    assert known == [(t, round(-0.01 * (i + 1), 4)) for i, t in enumerate(pieces)]  # every reply token, in order
    assert engine_logprobs(tokenizer, enc, Trajectory.model_construct(messages=messages, agent_logprobs={})) is None


def played(task_id: str, total: float, verifiable: float = 0.0) -> Played:
    reward = Reward(verifiable=verifiable, verifiable_fraction=0, format=1, budget=0, total=total)
    v = Verdict(trajectory_id=f"{task_id}-{total}", task_id=task_id, agent_id="a", criteria=[], passed=False)
    v.reward = reward
    return Played(task_id, None, v)  # type: ignore[arg-type]


def test_advantages_are_centred_on_each_tasks_mean_and_uniform_groups_teach_nothing():
    got = advantages([played("t1", 1.0), played("t1", 0.0), played("t1", 0.5), played("t2", 0.3), played("t2", 0.3)])
    assert sorted(round(a, 6) for _, a in got) == [-0.5, 0.0, 0.5] and {p.task_id for p, _ in got} == {"t1"}


def task(tid: str) -> Task:
    return Task.model_construct(task_id=tid)


def test_the_curriculum_sets_unsolved_tasks_aside_and_brings_them_back_every_retry_every_rounds():
    tasks = [task(f"t{i}") for i in range(4)]
    c = Curriculum(retry_every=2)
    assert len(c.choose(tasks, 0, 10, seed=0)) == 4
    c.record("t0", solved=False, i=0)
    c.record("t1", solved=True, i=0)
    assert {t.task_id for t in c.choose(tasks, 1, 10, seed=0)} == {"t1", "t2", "t3"}  # t0 set aside
    assert "t0" in {t.task_id for t in c.choose(tasks, 2, 10, seed=0)}  # due again two rounds later
    c.record("t0", solved=True, i=2)
    assert "t0" in {t.task_id for t in c.choose(tasks, 3, 10, seed=0)} and not c.set_aside
    assert Curriculum(retry_every=0).due("t0", 5)
    never = Curriculum(retry_every=0)
    never.record("t0", solved=False, i=0)
    assert not never.set_aside  # 0: nothing is set aside
    assert len(c.choose(tasks, 0, 2, seed=0)) == 2 and c.choose(tasks, 0, 2, seed=0) == c.choose(tasks, 0, 2, seed=0)


def test_the_temperature_goes_from_the_first_value_to_the_last():
    cfg = RLConfig(iterations=3, temperature=(1.0, 0.6))
    assert [temperature_at(cfg, i) for i in range(3)] == [1.0, 0.8, 0.6]
    assert temperature_at(RLConfig(iterations=1, temperature=(0.9, 0.5)), 0) == 0.9
    assert json.dumps(RLConfig().model_dump(mode="json")["temperature"]) == "[1.0, 0.7]"


# ------------------------------------------------------------------ end to end (engine)


def source_run(data, packs=("shop", "bank")):
    """A run store with an agent on each pack's world (the first's tasks train, the others' are held out), each
    with two blueprint tasks worded by the request grammar, and the export that says which worlds are held out."""
    from test_families import PACKS, drafts, task_of
    from test_gym import pack_agent

    from worldsmith.llm.prompts import Prompts
    from worldsmith.records import HeldOut, Persona, UserGoal
    from worldsmith.store import RunStore
    from worldsmith.tasks.requests import grammar_request

    grammar = Prompts(ROOT / "prompts").data("user_request")
    store = RunStore(data, "src")
    agents, tasks = [], []
    for pack in packs:
        p = PACKS[pack]
        agent = pack_agent(
            pack,
            f"agt_{pack}",
            f"You are the {pack} assistant. Use the tools to do what the user asks; say what you did",
        )
        agents.append(agent)
        for k, d in enumerate(drafts(pack, "single_call", 2)):
            t = task_of(p.world, d)
            request = grammar_request(grammar, d, Persona(), seed=k) or "Please help."
            tasks.append(
                t.model_copy(
                    update={
                        "task_id": f"tsk_{pack}_{k}",
                        "agent_id": agent.agent_id,
                        "user_goal": UserGoal(request=request, facts=d.facts),
                    }
                )
            )
        store.append([p.world])
        store.append(p.tools)
    store.append(agents)
    store.append(tasks)
    export = data / "exports" / "src"
    export.mkdir(parents=True)
    held = HeldOut(
        split_by="world", worlds=[PACKS[p].world.world_id for p in packs[1:]], agents=[f"agt_{p}" for p in packs[1:]]
    )
    (export / "held_out.json").write_text(held.model_dump_json())
    return store, tasks


ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]


@pytest.mark.engine
@pytest.mark.slow
def test_rl_end_to_end_plays_updates_and_resumes(tmp_path, project_root):
    from worldsmith.config import validate_config
    from worldsmith.rl import run_rl
    from worldsmith.store import RunStore

    data = tmp_path / "data"
    source_run(data)
    cfg = validate_config(
        {
            "run": {"data_dir": str(data), "prompts_dir": str(ROOT / "prompts")},
            "llm": {"server": {"port": 8093}},
            "rollouts": {"faults": {"enabled": False}, "real_execution": {"enabled": False}},
            "eval": {"port": 8094, "parallel": 4},
            "export": {"out_dir": str(data / "exports")},
            # a tight token budget: the episodes' rewards then differ by length, so the round has something to learn
            "judge": {"reward": {"tokens_per_step": 50}},
            "rl": {
                "iterations": 1,
                "tasks_per_iteration": 2,
                "samples_per_task": 2,
                "mode": "constrained",  # the packaged base makes no native call
                "batch_size": 2,
                "updates_per_iteration": 1,
                "eval_samples": 1,
                "out_dir": str(tmp_path / "models"),
                "name": "rl",
            },
        }
    )
    logs = []
    r = run_rl(cfg, ROOT, "src", log=logs.append)
    assert len(r.rounds) == 1 and r.rounds[0]["episodes"] == 4 and r.rounds[0]["tasks"] == 2
    assert r.rounds[0]["trained"] >= 2 and r.rounds[0]["steps"] == 1 and r.rounds[0]["loss"][0] > 0, r.rounds
    from safetensors.torch import load_file

    from worldsmith.finetune.loop import dense_base

    start = load_file(dense_base(cfg.llm.server.model_cache_dir) / "model.safetensors")
    tuned = load_file(r.out / "model" / "model.safetensors")
    assert any(not torch.equal(start[k], tuned[k]) for k in start)  # the update reached the saved policy
    assert r.before["episodes"] == 2 and r.after["episodes"] == 2  # the held-out bank tasks, one sample each
    assert (r.out / "model" / "config.json").exists() and (r.out / "checkpoints" / "state.json").exists()
    page = (r.out / "rl.html").read_text()
    assert page.count("<svg") == 2 and 'id="rounds"' in page
    saved = json.loads((r.out / "rl.json").read_text())
    assert saved["rounds"][0]["reward"] is not None and saved["source_run"] == "src"
    # every episode was judged, with its reward, in a run of its own (queryable like any run)
    rounds = [d for d in (data / "runs").iterdir() if "-rl-round0-" in d.name]
    assert len(rounds) == 1
    verdicts = RunStore(data, rounds[0].name).read(Verdict)
    assert len(verdicts) == 4 and all(v.reward is not None for v in verdicts)
    # a re-run returns the finished RL without playing again
    again = run_rl(cfg, ROOT, "src", log=logs.append)
    assert again.rounds == r.rounds and any("nothing to do" in m for m in logs)
    # one more round: resumed from the checkpoint, the first round and the held-out "before" not played again
    logs.clear()
    more = run_rl(cfg.model_copy(update={"rl": cfg.rl.model_copy(update={"iterations": 2})}), ROOT, "src", logs.append)
    assert any("resuming after round 1" in m for m in logs) and not any("held-out before" in m for m in logs)
    assert more.rounds[0] == r.rounds[0] and len(more.rounds) == 2 and more.before == r.before
    # the checkpoint continues the base's policy: a re-run from another start policy is refused, nothing lost
    moved = cfg.rl.model_copy(update={"iterations": 3, "policy": str(tmp_path / "another-policy")})
    with pytest.raises(ValueError, match="continues a policy that started from"):
        run_rl(cfg.model_copy(update={"rl": moved}), ROOT, "src", log=logs.append)
    assert json.loads((r.out / "checkpoints" / "state.json").read_text())["iteration"] == 2


@pytest.mark.engine
@pytest.mark.slow
def test_rl_on_vllm_keeps_one_server_and_loads_each_rounds_weights_into_it(tmp_path):
    """With eval.engine vllm the rounds share one policy server: the first round starts it, the next loads its
    weights into it in place (no restart), each round's run uses it, and it is stopped at the end."""
    from conftest import free_port

    from worldsmith.config import validate_config
    from worldsmith.llm.server import ModelServer
    from worldsmith.rl import run_rl

    data = tmp_path / "data"
    source_run(data, packs=("shop",))  # no held-out world: only the rounds are played
    cfg = validate_config(
        {
            "run": {"data_dir": str(data), "prompts_dir": str(ROOT / "prompts")},
            "llm": {"server": {"port": free_port()}},
            "rollouts": {"faults": {"enabled": False}, "real_execution": {"enabled": False}},
            "eval": {"engine": "vllm", "port": free_port(), "parallel": 2},
            "export": {"out_dir": str(data / "exports")},
            "rl": {
                "iterations": 2,
                "tasks_per_iteration": 1,
                "samples_per_task": 2,
                "mode": "constrained",
                "batch_size": 2,
                "updates_per_iteration": 1,
                "out_dir": str(tmp_path / "models"),
                "name": "rl",
            },
        }
    )
    logs: list[str] = []
    r = run_rl(cfg, ROOT, "src", log=logs.append)
    assert [x["episodes"] for x in r.rounds] == [2, 2] and r.before == {}, r.rounds
    assert sum("starting the policy's vLLM server" in m for m in logs) == 1
    assert sum("weights loaded into the running vLLM server" in m for m in logs) == 1
    assert sum("using the model server already answering" in m for m in logs) == 2  # each round's run used it
    policy = cfg.llm.model_copy(update={"policy": cfg.llm.policy.model_copy(update={"port": cfg.eval.port})})
    assert not ModelServer(policy.policy_server(), ROOT, data).healthy()  # stopped at the end


@pytest.mark.engine
@pytest.mark.parametrize("engine_name", ["llamacpp", pytest.param("vllm", marks=[pytest.mark.vllm, pytest.mark.slow])])
def test_the_served_engines_logprobs_line_up_with_the_trainers_and_agree(engine_name, request, tokenizer):
    """What the mask compares: the engine's log-probabilities of a reply it sampled (at temperature 0.7: each
    reports the model's own, not the sampler's) land on the trainer's tokens of the same message and agree with the
    trainer's for the same weights. llama.cpp (the packaged GGUF against its de-quantised folder): 69 of 70 tokens
    lined up here, mean difference 0.04 nats; vLLM (the de-quantised folder served in bf16): 80 of 81, 0.03 nats."""
    server = request.getfixturevalue(f"{engine_name}_server")
    import asyncio

    from conftest import llm_config

    from worldsmith.config import ServerConfig
    from worldsmith.finetune.data import encode
    from worldsmith.finetune.loop import dense_base, load_base
    from worldsmith.llm.client import LLMClient

    messages = [
        {"role": "system", "content": "You are a helpful shop assistant."},
        {"role": "user", "content": "Is my order o-1 shipped yet? Tell me in two sentences."},
    ]

    async def sample():
        async with LLMClient(llm_config(server.url, logprobs=True, temperature=0.7)) as c:
            return await c.tool_step("agent", messages, [], mode="native", max_tokens=80, seed=3)

    r = asyncio.run(sample())
    assert r.ok and r.content and r.logprobs, r.error
    assert "".join(t for t, _ in r.logprobs).strip() == r.content.strip()
    traj = Trajectory.model_construct(messages=[*messages, r.message()], agent_logprobs={"2": r.logprobs})
    enc = encode(tokenizer, {"messages": traj.messages, "tools": []}, 1024)
    engine = engine_logprobs(tokenizer, enc, traj)
    model, _ = load_base(str(dense_base(ServerConfig().model_cache_dir)))
    with torch.no_grad():
        trainer = token_logprobs(model, torch.tensor(enc["input_ids"]), torch.tensor(enc["labels"]))
    known = ~engine.isnan()
    assert known.sum() >= 0.9 * len(trainer), (int(known.sum()), len(trainer))
    assert (trainer[known] - engine[known]).abs().mean() < 0.15
