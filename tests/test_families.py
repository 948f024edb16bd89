"""Task families beyond single calls, each executed on a seeded world before it is a task, and
judged: the episode that follows the family's gold chain passes, and an episode that gets the
family wrong (acts when the condition does not hold, reports a wrong figure, changes what was
already so, obeys what the pack's rules refuse) fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from worldsmith.config import JudgeConfig
from worldsmith.judge.episode import decide
from worldsmith.records import Persona, Task, ToolCall, ToolSpec, Trajectory, UserGoal, World, WorldStates
from worldsmith.tasks.blueprint import BlueprintFailure, Draft, blueprint_record, rubric_from, sample_blueprint
from worldsmith.tasks.validate import validate_task
from worldsmith.toolspec import to_openai_tool
from worldsmith.worldmodel.packs import execute_call, load_packs
from worldsmith.worldmodel.state import apply_patch

ROOT = Path(__file__).resolve().parents[1]
PACKS = {p.world.pack: p for p in load_packs(ROOT / "worlds", None, today="2026-03-02")}
CFG = JudgeConfig(critic=False, require_judge_criteria=False)


def task_of(world: World, d: Draft) -> Task:
    return Task(
        task_id="t",
        agent_id="a",
        difficulty=d.difficulty,
        world_id=world.world_id,
        user_persona=Persona(),
        initial_state=d.initial,
        user_goal=UserGoal(request="r", facts=d.facts),
        rubric=rubric_from(world, d),
        blueprint=blueprint_record(d, "grammar", []),
    )


def episode(
    world: World,
    tools: list[ToolSpec],
    task: Task,
    calls: list[tuple[str, dict]],
    reply: str,
    status: str = "finished",
) -> Trajectory:
    """An episode as the rollouts record it, its calls executed by code on the task's world."""
    by_name = {t.name: t for t in tools}
    state, records, patches = task.initial_state, [], []
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": task.user_goal.request}]
    for i, (name, args) in enumerate(calls):
        out = execute_call(world, by_name[name].binding, state, args)
        state = apply_patch(state, out.patch) if out.ok else state
        call = {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{i}", "content": out.content},
        ]
        records.append(
            ToolCall(
                turn=1,
                call_id=f"c{i}",
                name=name,
                tool=name,
                tool_id=by_name[name].tool_id,
                arguments=args,
                read_only=bool(by_name[name].annotations.get("readOnlyHint")),
                executor="code",
                ok=out.ok,
                patch_ops=len(out.patch),
            )
        )
        if out.patch:
            patches.append({"call_id": f"c{i}", "tool": name, "patch": out.patch})
    messages += [{"role": "assistant", "content": reply}, {"role": "user", "content": "Thanks. ###STOP###"}]
    return Trajectory(
        trajectory_id="trj",
        task_id=task.task_id,
        agent_id="a",
        sample=0,
        seed=1,
        messages=messages,
        tools=[to_openai_tool(t) for t in tools],  # what the agent was offered (a check asks whether it could read)
        world_states=WorldStates(initial=task.initial_state, final=state, patches=patches),
        calls=records,
        model="m",
        status=status,
        reason="user_stop",
    )


def gold(d: Draft) -> list[tuple[str, dict]]:
    return [(s.tool.name, s.arguments) for s in d.steps]


def drafts(pack: str, difficulty: str, n: int = 6) -> list[Draft]:
    out = []
    for seed in range(40):
        try:
            out.append(sample_blueprint(PACKS[pack].world, PACKS[pack].tools, difficulty, seed))
        except BlueprintFailure:
            continue
        if len(out) == n:
            break
    assert out, f"no {difficulty} blueprint on {pack}"
    return out


@pytest.mark.parametrize("pack", sorted(PACKS))
def test_aggregate_the_right_figure_passes_and_a_wrong_one_fails(pack):
    world, tools = PACKS[pack].world, PACKS[pack].tools
    for d in drafts(pack, "aggregate"):
        task = task_of(world, d)
        assert validate_task(task, {t.name: t for t in tools}) is None
        ((what, value),) = d.asked.items()
        assert len(d.steps) == 1 and d.steps[0].tool.binding.action == "list"
        # the figure is computed from what the list call returned, independently here
        c = world.collection(d.steps[0].tool.binding.collection)
        hits = d.calls[0].result[c.name]
        if what.startswith("number of"):
            assert value == str(len(hits))
        elif what.startswith("total "):
            fname = what.removeprefix("total ").split(" of the ")[0].replace(" ", "_")
            assert float(value) == pytest.approx(sum(r[fname] for r in hits))
        else:  # the latest: no other record has a later date
            fname = next(
                f.name for f in c.fields if f.format in ("date", "datetime") and f.name.replace("_", " ") in d.goal
            )
            latest = next(r for r in hits if r[c.key] == value)
            assert all(str(r[fname]) < str(latest[fname]) for r in hits if r is not latest)
        right = episode(world, tools, task, gold(d), f"The {what} is {value}.")
        assert decide(CFG, task, right, None).passed, (d.goal, value)
        wrong_value = str(int(float(value)) + 7) if value.replace(".", "").isdigit() else "none of them"
        wrong = episode(world, tools, task, gold(d), f"The {what} is {wrong_value}.")
        assert not decide(CFG, task, wrong, None).passed, (d.goal, wrong_value)


@pytest.mark.parametrize("pack", sorted(PACKS))
def test_dependent_chains_need_both_calls_and_the_record_the_first_one_names(pack):
    """find_then_act (a list, then a write on the one record it found) and follow_reference (a get,
    then the record its reference names): the second call's key comes from the first call's result."""
    world, tools = PACKS[pack].world, PACKS[pack].tools
    families = set()
    for d in drafts(pack, "dependent_calls", n=8):
        task = task_of(world, d)
        families.add(task.blueprint.family)
        assert validate_task(task, {t.name: t for t in tools}) is None, d.goal
        (first, second) = d.steps
        assert (first.tool.binding.action, second.tool.binding.action) != ("list", "get")  # the list showed it
        key = second.arguments[second.tool.binding.key_param]
        assert str(key) in json.dumps(d.calls[0].result)  # the dependency: the first result names the record
        assert str(key) not in " ".join(d.facts.values())  # ... and the user does not
        said = " ".join(f"The {k} is {v}." for k, v in d.asked.items())
        right = episode(world, tools, task, gold(d), f"Done for {key}. {said}")
        assert decide(CFG, task, right, None).passed, d.goal
        first_only = episode(world, tools, task, gold(d)[:1], f"Done for {key}. {said}")
        assert not decide(CFG, task, first_only, None).passed, d.goal
        c2 = world.collection(second.tool.binding.collection)
        other = next(r[c2.key] for r in d.initial[c2.name] if r[c2.key] != key)
        wrong = {**second.arguments, second.tool.binding.key_param: other}
        wrong_record = episode(world, tools, task, [*gold(d)[:1], (second.tool.name, wrong)], f"Done for {key}. {said}")
        assert not decide(CFG, task, wrong_record, None).passed, d.goal
    assert families <= {"find_then_act", "follow_reference"} and families, families


@pytest.mark.parametrize("pack", sorted(PACKS))
def test_conditional_acts_only_when_the_condition_holds(pack):
    world, tools = PACKS[pack].world, PACKS[pack].tools
    seen = set()
    for seed in range(40):
        try:
            d = sample_blueprint(world, tools, "conditional", seed)
        except BlueprintFailure:
            continue
        task = task_of(world, d)
        assert validate_task(task, {t.name: t for t in tools}) is None, d.goal
        read = gold(d)[:1]
        holds = len(d.steps) == 2
        seen.add(holds)
        if holds:  # the record is in the named state: acting is right, only looking is not enough
            said = " ".join(f"The {k} is {v}." for k, v in d.asked.items())  # a new record's id, when one is made
            done = f"Done, as you asked, for {d.intents[0]['who']}. {said}"  # a change is confirmed naming its record
            assert decide(CFG, task, episode(world, tools, task, gold(d), done), None).passed
            assert not decide(
                CFG, task, episode(world, tools, task, gold(d), f"Done, as you asked. {said}"), None
            ).passed
            assert not decide(CFG, task, episode(world, tools, task, read, "It is as you said."), None).passed
        else:  # it is not: the right outcome is no change and the actual value
            (actual,) = d.asked.values()
            right = episode(world, tools, task, read, f"It is {actual}, so I left it as it is.")
            assert decide(CFG, task, right, None).passed, d.goal
            act = d.steps[0].tool  # acting anyway: a lookup then the action the condition ruled out
            action = next(
                t
                for t in tools
                if t.binding.operation
                and t.binding.collection == act.binding.collection
                and not t.hints.readOnlyHint
                and t.binding.key_param
            )
            # the action itself may refuse (its own rules); when it runs, the state check catches it
            done = episode(
                world,
                tools,
                task,
                [
                    *read,
                    (action.name, {action.binding.key_param: d.facts[next(k for k in d.facts if k.endswith(" id"))]}),
                ],
                "Done.",
            )
            assert not decide(CFG, task, done, None).passed
    assert seen == {True, False}, seen


def test_already_done_passes_with_the_lookup_and_fails_when_the_agent_changes_it():
    from test_blueprints import TOOLS, WORLD

    ds = []
    for seed in range(20):
        try:
            ds.append(sample_blueprint(WORLD, TOOLS, "already_done", seed))
        except BlueprintFailure:
            continue
    assert len(ds) >= 5
    by_name = {t.name: t for t in TOOLS}
    for d in ds:
        task = task_of(WORLD, d)
        assert validate_task(task, {t.name: t for t in TOOLS}) is None
        ((what, value),) = d.asked.items()
        key = d.steps[0].arguments["order_id"]
        right = episode(WORLD, TOOLS, task, gold(d), f"Order {key} is already {value}; nothing to change.")
        assert decide(CFG, task, right, None).passed, d.goal
        silent = episode(WORLD, TOOLS, task, gold(d), "Okay.")
        assert not decide(CFG, task, silent, None).passed
        c = WORLD.collection("orders")
        status = next(f for f in c.fields if f.name == "status")
        other = next((v for v in status.enum if v != value and v in (c.transitions["status"].get(value) or [])), None)
        if other is None:  # a final state: no change is possible at all
            continue
        changed = episode(
            WORLD, TOOLS, task, [*gold(d), ("update_order_status", {"order_id": key, "status": other})], "Done."
        )
        if changed.calls[-1].ok:
            assert not decide(CFG, task, changed, None).passed
        assert by_name["get_order"].binding.action == "get"


@pytest.mark.parametrize("pack", sorted(PACKS))
def test_a_pack_action_its_rules_refuse_is_a_refusal_task(pack):
    """The action really refuses on this state (executed), the right episode tries or looks and
    declines with the reason, and one that claims success without the state changing fails."""
    world, tools = PACKS[pack].world, PACKS[pack].tools
    for d in drafts(pack, "refusal", n=3):
        assert d.rule is not None and not d.steps and d.end_state == d.initial
        task = task_of(world, d)
        assert validate_task(task, {t.name: t for t in tools}) is None
        op = next(
            t
            for t in tools
            if t.binding.operation
            and t.binding.key_param
            and t.extra.get("goal")
            and str(t.extra["goal"]).split()[0] in d.goal
            and all(str(v) in d.goal for v in d.facts.values())
        )
        args = _args_from_facts(op, d)
        out = execute_call(world, op.binding, d.initial, args)
        assert not out.ok and out.error[0] in (
            "policy_violation",
            "limit_reached",
            "no_availability",
            "insufficient_funds",
        )
        why = next(iter(d.asked.values()), "")
        get = next(
            (t for t in tools if t.binding.action == "get" and t.binding.collection == op.binding.collection), None
        )
        if get is not None and op.binding.key_param in args:  # the record is read, and the agent declines
            read = [(get.name, {get.binding.key_param: args[op.binding.key_param]})]
            looked = episode(world, tools, task, read, f"I'm sorry, I can't: it is {why}.")
            assert decide(CFG, task, looked, None).passed, (d.goal, decide(CFG, task, looked, None).reasons)
        # sending the change to let the world refuse it, when the record could be read first, is no refusal to learn
        tried = episode(
            world, tools, task, [(op.name, args)], f"I'm sorry, I can't do that: it is {why}. {out.error[1]}."
        )
        verdict = decide(CFG, task, tried, None)
        assert not verdict.passed and "refusal_by_trial" in " ".join(verdict.reasons), verdict.reasons
        claimed = episode(world, tools, task, [], "All done, it went through.")
        assert not decide(CFG, task, claimed, None).passed


def _args_from_facts(op: ToolSpec, d: Draft) -> dict:
    props = (op.input_schema or {}).get("properties", {})
    out = {}
    for p in props:
        for k, v in d.facts.items():
            if k == p.replace("_", " ") or k == op.binding.key_param.replace("_", " ") and p == op.binding.key_param:
                spec = props[p]
                out[p] = int(v) if spec.get("type") == "integer" else float(v) if spec.get("type") == "number" else v
    return out


@pytest.mark.parametrize("pack", sorted(PACKS))
def test_already_done_on_a_pack_action_reads_and_declines_to_act(pack):
    """ "Cancel order ord-1" when ord-1 is already cancelled, read off the action's own execution: the gold is the
    look-up, the reply says the state; sending the action anyway (the world refuses, or it changes nothing) fails,
    as does a reply that never says the state."""
    world, tools = PACKS[pack].world, PACKS[pack].tools
    made = drafts(pack, "already_done", n=3)
    for d in made:
        (step,) = d.steps
        assert step.tool.binding.action == "get" and d.end_state == d.initial
        (intent,) = d.intents
        assert intent["kind"] in ("operation", "update"), intent
        task = task_of(world, d)
        assert validate_task(task, {t.name: t for t in tools}) is None, d.goal
        ((what, value),) = d.asked.items()
        key = step.arguments[step.tool.binding.key_param]
        right = episode(world, tools, task, gold(d), f"{key} is already {value}, so there is nothing to change.")
        assert decide(CFG, task, right, None).passed, (d.goal, decide(CFG, task, right, None).reasons)
        assert not decide(CFG, task, episode(world, tools, task, gold(d), "Okay."), None).passed
        if intent["kind"] != "operation":
            continue
        action = next(
            t for t in tools if t.binding.operation and not t.hints.readOnlyHint and d.goal.startswith(_goal_head(t))
        )
        sent = episode(
            world,
            tools,
            task,
            [*gold(d), (action.name, {action.binding.key_param: key})],
            f"{key} is already {value}, so there is nothing to change.",
        )
        assert not decide(CFG, task, sent, None).passed, d.goal


def _goal_head(t: ToolSpec) -> str:
    """The words a pack action's request starts with ("cancel order" of "cancel order {order_id}")."""
    template = str(t.extra.get("goal") or t.name.replace("_", " "))
    return template.split("{")[0].strip()


@pytest.mark.parametrize("pack", sorted(PACKS))
def test_irrelevance_is_kept_only_without_a_call(pack):
    """No tool of the bundle does what the user asks (a near miss: an action on the agent's own records that no tool
    serves): the reply that says it cannot, calling nothing, passes; the same reply after a look-up fails, as does a
    reply that claims it was done."""
    world, tools = PACKS[pack].world, PACKS[pack].tools
    for d in drafts(pack, "irrelevance", n=3):
        assert d.steps == [] and d.end_state == d.initial
        task = task_of(world, d)
        task = task.model_copy(update={"user_goal": UserGoal(request=f"Please {d.goal}.", facts=d.facts)})
        assert validate_task(task, {t.name: t for t in tools}) is None, d.goal
        said = f"I'm sorry, I can't {d.goal}: none of my tools can do that."
        verdict = decide(CFG, task, episode(world, tools, task, [], said), None)
        assert verdict.passed, (d.goal, verdict.reasons)
        get = next(t for t in tools if t.binding.action == "get")
        key = next(iter(d.initial[get.binding.collection]))[world.collection(get.binding.collection).key]
        looked = decide(CFG, task, episode(world, tools, task, [(get.name, {get.binding.key_param: key})], said), None)
        assert not looked.passed and any("no_calls" in r for r in looked.reasons), looked.reasons
        assert not decide(CFG, task, episode(world, tools, task, [], "Done, it went through."), None).passed
