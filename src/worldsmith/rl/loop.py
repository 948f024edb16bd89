"""Policy optimisation on worldsmith's tasks: Kimi k1.5's objective, on one screen.

A round: the policy's weights are served (llama.cpp converts the HF folder to a GGUF and serves it for the round;
vLLM serves the folder as is, one server for all rounds, each round's weights loaded into it in place),
it plays `samples_per_task` episodes of each chosen training task through the pipeline's own rollouts and
judge stages (the same episode loop as everywhere), and each episode's reward (`Verdict.reward.total`, the
judge's components) is centred on its task's mean. The update minimises k1.5's

    L = mean_j ( r_j - mean(r) - tau * log( pi(y_j | x) / pi_ref(y_j | x) ) )^2

over the agent's tokens of each episode, pi_ref being the weights that played it (the next round's reference
is this round's result, as in k1.5's online mirror descent); at the first step the gradient is -2 tau (r - mean
r) grad log pi, a policy gradient. Tokens whose log-probability under the trainer moved more than `logratio_mask`
from the rollout's are masked out (K2.5): the serving engine's own log-probabilities of the sampled tokens in native
mode (recorded with each agent message), the trainer's at the round's start where none lines up; tokens the engine
did not sample as trained (a tool call the chat template re-renders) are left out too (`rl.unsampled: drop`). Tasks
none of whose k samples earned the verifiable reward are set aside and tried again every `retry_every` rounds (Kimi-
Dev's pass@k = 0 curriculum); the sampling temperature goes from `temperature[0]` to `temperature[1]`. A checkpoint
after every round (weights, optimizer, state) is what a re-run resumes from. Held-out tasks are played before the
first round and after the last; `rl.json` and `rl.html` keep the figures.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import random
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

from worldsmith.config import PipelineConfig, RLConfig, data_dir, resolve_path
from worldsmith.evaluate.play import EvalModel, eval_config, held_out_tasks, seed_store, served_as
from worldsmith.export.sft import sft_messages
from worldsmith.finetune.data import IGNORE, encode
from worldsmith.finetune.loop import (
    dense_base,
    finetune_paths,
    load_base,
    save_model,
    set_checkpointing,
    use_checkpointing,
)
from worldsmith.finetune.muon import make_optimizer
from worldsmith.llm.server import ModelServer
from worldsmith.records import Task, Trajectory, Verdict, content_id
from worldsmith.store import RunStore

Log = Callable[[str], Any]
ENGINE_MIN_RUN = 4  # equal tokens in a row before the engine's log-probabilities are trusted to line up


def temperature_at(cfg: RLConfig, i: int) -> float:
    """The sampling temperature of round `i`: linear from the first to the last."""
    first, last = cfg.temperature
    return first if cfg.iterations == 1 else round(first + (last - first) * i / (cfg.iterations - 1), 4)


@dataclass
class Curriculum:
    """Kimi-Dev's pass@k = 0 curriculum: a task whose k samples all missed the verifiable reward is set aside,
    and due again every `retry_every` rounds after."""

    retry_every: int
    set_aside: dict[str, int] = field(default_factory=dict)  # task id -> the round it was set aside in

    def due(self, task_id: str, i: int) -> bool:
        at = self.set_aside.get(task_id)
        return at is None or (self.retry_every > 0 and (i - at) % self.retry_every == 0)

    def choose(self, tasks: list[Task], i: int, n: int, seed: int) -> list[Task]:
        """`n` tasks for round `i`, seeded; set-aside ones only when due, and never more than the rest allow."""
        pool = [t for t in tasks if self.due(t.task_id, i)]
        rng = random.Random(f"{seed}:{i}")
        rng.shuffle(pool)
        return sorted(pool[:n], key=lambda t: t.task_id)

    def record(self, task_id: str, solved: bool, i: int) -> None:
        if solved:
            self.set_aside.pop(task_id, None)
        elif self.retry_every > 0:
            self.set_aside.setdefault(task_id, i)


@dataclass
class RLState:
    """What a re-run resumes from (`checkpoints/state.json`), beside the weights and the optimizer."""

    iteration: int = 0  # rounds finished
    rounds: list[dict[str, Any]] = field(default_factory=list)
    set_aside: dict[str, int] = field(default_factory=dict)
    before: dict[str, Any] | None = None  # the held-out tasks, played by the starting policy
    start: str | None = None  # the policy round 1 started from: a re-run from another one does not resume this


@dataclass
class Played:
    task_id: str
    traj: Trajectory
    verdict: Verdict

    @property
    def reward(self) -> float:
        return self.verdict.reward.total if self.verdict.reward else 0.0

    @property
    def verifiable(self) -> float:
        return self.verdict.reward.verifiable if self.verdict.reward else 0.0


def play(
    cfg: PipelineConfig,
    root: Path,
    source: RunStore,
    policy: Path,
    tasks: list[Task],
    samples: int,
    temperature: float,
    label: str,
    mode: str,
    log: Log = print,
) -> list[Played]:
    """`policy` (an HF folder) as the agent, `samples` episodes of each task, at `temperature`, played and judged by
    the pipeline in a run of their own (resumable: a re-run plays only what is missing)."""
    from worldsmith import pipeline

    base = cfg.model_copy(
        update={
            "eval": cfg.eval.model_copy(update={"samples_per_task": samples}),
            "llm": cfg.llm.model_copy(
                update={
                    "roles": cfg.llm.roles.model_copy(
                        update={
                            "agent": cfg.llm.roles.agent.model_copy(
                                # native: the engine's log-probabilities of the sampled text, for the mask
                                update={"temperature": temperature, "logprobs": mode == "native"}
                            )
                        }
                    )
                }
            ),
        }
    )
    model = served_as(base, EvalModel(label, str(policy)), log)
    ecfg = eval_config(base, model, mode)
    run_id = f"{source.run_id}-rl-{label}-" + content_id(model.path, ecfg.config_hash(), [t.task_id for t in tasks])[:8]
    store = RunStore(data_dir(cfg, root), run_id)
    seed_store(store, source, tasks)
    pipeline.synth(ecfg, root, run_id=run_id, stages=["rollouts", "judge"], log=log)
    wanted = {t.task_id for t in tasks}
    verdicts = {v.trajectory_id: v for v in store.read(Verdict)}
    return [
        Played(t.task_id, t, verdicts[t.trajectory_id])
        for t in sorted(store.read(Trajectory), key=lambda t: t.trajectory_id)
        if t.task_id in wanted and t.trajectory_id in verdicts
    ]


def summarise(played: list[Played]) -> dict[str, Any]:
    n = len(played)
    return {
        "episodes": n,
        "reward": round(sum(p.reward for p in played) / n, 4) if n else None,
        "verifiable": round(sum(p.verifiable for p in played) / n, 4) if n else None,
        "passed": sum(p.verdict.passed for p in played),
    }


def advantages(played: list[Played]) -> list[tuple[Played, float]]:
    """Each episode with its reward minus its task's mean reward (k1.5's baseline); tasks whose samples all
    earned the same reward teach nothing and are left out."""
    by_task: dict[str, list[Played]] = {}
    for p in played:
        by_task.setdefault(p.task_id, []).append(p)
    out = []
    for group in by_task.values():
        mean = sum(p.reward for p in group) / len(group)
        if any(abs(p.reward - mean) > 1e-9 for p in group):
            out += [(p, p.reward - mean) for p in group]
    return out


def token_logprobs(model, ids: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """log pi(token) at every labelled position (the agent's tokens) of one sequence."""
    logits = model(input_ids=ids[None]).logits[0, :-1].float()
    targets = labels[1:]
    keep = targets != IGNORE
    return torch.log_softmax(logits[keep], dim=-1).gather(-1, targets[keep][:, None])[:, 0]


def engine_logprobs(tok, enc: dict[str, Any], traj: Trajectory, min_run: int = ENGINE_MIN_RUN) -> torch.Tensor | None:
    """The serving engine's log-probability of each trained token of `enc` (the agent's tokens, in the order
    `token_logprobs` gives them), NaN where none is known; None when the episode recorded none. The engine's
    sampled tokens are lined up with the trainer's tokenization of the same messages by their text: runs of at
    least `min_run` equal tokens (a tool call re-rendered by the chat template differs where its JSON does)."""
    if not traj.agent_logprobs:
        return None
    sampled = [tp for i in sorted(traj.agent_logprobs, key=int) for tp in traj.agent_logprobs[i]]
    trained = [tok.decode([t]) for t in enc["labels"][1:] if t != IGNORE]  # token_logprobs' targets, in order
    out = torch.full((len(trained),), float("nan"))
    matcher = difflib.SequenceMatcher(None, trained, [t for t, _ in sampled], autojunk=False)
    for a, b, n in matcher.get_matching_blocks():
        if n >= min_run:
            out[a : a + n] = torch.tensor([lp for _, lp in sampled[b : b + n]])
    return out


def k15_loss(
    logp: torch.Tensor,
    logp_ref: torch.Tensor,
    advantage: float,
    tau: float,
    bound: float | None,
    logp_rollout: torch.Tensor | None = None,
    unsampled: str = "keep",
) -> tuple[torch.Tensor, int]:
    """(r - mean r - tau * log(pi / pi_ref))^2 for one episode, the log-ratio summed over its tokens except those
    whose log-probability moved more than `bound` from the rollout's (K2.5's mask: the engine's where
    `logp_rollout` has it, else the reference's) and, with `unsampled="drop"`, those the engine did not sample
    (NaN in `logp_rollout`); and how many were left out."""
    ratio = logp - logp_ref
    rollout = logp_ref if logp_rollout is None else torch.where(logp_rollout.isnan(), logp_ref, logp_rollout)
    keep = torch.ones_like(ratio, dtype=torch.bool) if bound is None else (logp - rollout).detach().abs() <= bound
    if unsampled == "drop" and logp_rollout is not None:
        keep &= ~logp_rollout.isnan()
    seq = (ratio * keep).sum()
    return (advantage - tau * seq) ** 2, int((~keep).sum())


def update(
    model, opt, items: list[tuple[dict, float]], cfg: RLConfig, device: str, rollouts: list | None = None
) -> dict[str, Any]:
    """`updates_per_iteration` optimizer steps over the round's episodes (encoded, with their advantages);
    `rollouts`: each episode's engine log-probabilities (`engine_logprobs`), or None, for the mask."""
    if not items:
        return {
            "steps": 0,
            "trained": 0,
            "loss": None,
            "masked_tokens": 0,
            "masked_share": 0.0,
            "engine_logprob_share": 0.0,
        }
    tensors = [
        (torch.tensor(e["input_ids"], device=device), torch.tensor(e["labels"], device=device), a) for e, a in items
    ]
    rollouts = [None if r is None else r.to(device) for r in (rollouts or [None] * len(items))]
    model.eval()
    with torch.no_grad():  # the reference: the weights that played these episodes
        refs = [token_logprobs(model, ids, labels).detach() for ids, labels, _ in tensors]
    model.train()
    rng = random.Random(cfg.seed)
    order = list(range(len(tensors)))
    losses, masked, tokens = [], 0, 0
    for _ in range(cfg.updates_per_iteration):
        rng.shuffle(order)
        batch = order[: cfg.batch_size]
        opt.zero_grad(set_to_none=True)
        total = 0.0
        for j in batch:
            ids, labels, adv = tensors[j]
            logp = token_logprobs(model, ids, labels)
            loss, n_masked = k15_loss(logp, refs[j], adv, cfg.tau, cfg.logratio_mask, rollouts[j], cfg.unsampled)
            (loss / len(batch)).backward()
            total += loss.item() / len(batch)
            masked += n_masked
            tokens += int(refs[j].numel())
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip_grad_norm)
        opt.step()
        losses.append(round(total, 6))
    opt.zero_grad(set_to_none=True)
    known = sum(int((~r.isnan()).sum()) for r in rollouts if r is not None)
    trained_tokens = sum(int(r.numel()) for r in refs)
    return {
        "steps": cfg.updates_per_iteration,
        "trained": len(items),
        "loss": losses,
        "masked_tokens": masked,
        "masked_share": round(masked / tokens, 4) if tokens else 0.0,
        # the share of trained tokens whose rollout log-probability is the engine's (the rest: the reference's)
        "engine_logprob_share": round(known / trained_tokens, 4) if trained_tokens else 0.0,
    }


@contextlib.contextmanager
def round_server(cfg: PipelineConfig, root: Path, serve: Path, mode: str, log: Log) -> Iterator[Callable[[], None]]:
    """Yields `push`, called once a round's weights are saved in `serve`. With `eval.engine: vllm` one server
    plays every round: the first push starts it on `serve`, the next ones load the new weights into it in place
    (`ModelServer.reload_weights`; each round's run finds it answering and uses it), and it stops at the end.
    With llama.cpp `push` does nothing: a GGUF has no in-place load, so each round's run converts and serves
    its own."""
    if cfg.eval.engine != "vllm":
        yield lambda: None
        return
    policy = eval_config(cfg, EvalModel("serving", str(serve)), mode).llm.policy_server()
    server = ModelServer(policy, root, data_dir(cfg, root), reloadable=True)

    def push() -> None:
        if not server.healthy():
            log(f"rl: starting the policy's vLLM server on {server.url}; later rounds load their weights into it")
            server.start()
        else:
            log(f"rl: weights loaded into the running vLLM server in {server.reload_weights(serve):.1f}s")

    try:
        yield push
    finally:
        server.stop()


def rl_paths(cfg: PipelineConfig, root: Path, run_id: str | None = None) -> tuple[str | None, Path, Path]:
    """(the policy to start from: rl.policy, else this config's `make finetune` output if it exists, else None: the
    base; the export that says which tasks are held out; the output folder)."""
    export, sft_out = finetune_paths(cfg, root, run_id)
    run = run_id or cfg.default_run_id()
    start = cfg.rl.policy or (str(sft_out / "model") if (sft_out / "model" / "config.json").exists() else None)
    out = resolve_path(root, cfg.rl.out_dir) / (cfg.rl.name or f"{run}-rl")
    return start, export, out


@dataclass
class RLResult:
    out: Path
    start: str
    rounds: list[dict[str, Any]]
    before: dict[str, Any]
    after: dict[str, Any]
    seconds: float = 0.0


def _save_checkpoint(out: Path, model, tok, opt, state: RLState) -> None:
    ckpt = out / "checkpoints"
    tmp = out / "checkpoints.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    save_model(model, tok, tmp / "policy")
    torch.save(opt.state_dict(), tmp / "optimizer.pt")
    (tmp / "state.json").write_text(json.dumps(asdict(state), indent=1))
    shutil.rmtree(ckpt, ignore_errors=True)
    tmp.rename(ckpt)


def run_rl(cfg: PipelineConfig, root: Path, run_id: str | None = None, log: Log = print) -> RLResult:
    """The RL stage end to end (resumes from `<out>/checkpoints`)."""
    rl = cfg.rl
    t0 = time.monotonic()
    source_run = run_id or cfg.default_run_id()
    source = RunStore(data_dir(cfg, root), source_run)
    start, export, out = rl_paths(cfg, root, run_id)
    held = held_out_tasks(source, export, rl.eval_tasks)
    held_ids = {t.task_id for t in held_out_tasks(source, export)}
    train_tasks = sorted((t for t in source.read(Task) if t.task_id not in held_ids), key=lambda t: t.task_id)
    if not train_tasks:
        raise ValueError(f"run {source_run} has no training tasks: run `make synth` first")
    record = out / "rl.json"
    if record.exists():  # a finished RL of this config: its figures, nothing trained or played again
        saved = json.loads(record.read_text())
        if saved.get("config") == rl.model_dump(mode="json") and saved.get("source_run") == source_run:
            log(f"rl: {out} already holds this RL ({len(saved['rounds'])} rounds); nothing to do")
            kept = {k: saved[k] for k in ("start", "rounds", "before", "after", "seconds")}
            return RLResult(out=out, **kept)
    start_dir = Path(start) if start else dense_base(cfg.llm.server.model_cache_dir, log=log)
    ckpt = out / "checkpoints"
    state = RLState(start=str(start_dir))
    if (ckpt / "state.json").exists():
        state = RLState(**json.loads((ckpt / "state.json").read_text()))
        if state.start is not None and state.start != str(start_dir):
            raise ValueError(
                f"rl: {ckpt} continues a policy that started from {state.start}, not {start_dir} (rl.policy or "
                f"this config's finetune output); remove {ckpt} to start again, or set rl.name for a new folder"
            )
        log(f"rl: resuming after round {state.iteration} from {ckpt}")
        model, tok = load_base(str(ckpt / "policy"))
    else:
        model, tok = load_base(str(start_dir))
    cuda = torch.cuda.is_available()
    device = "cuda" if cuda else "cpu"
    model.to(device)
    model.config.use_cache = False
    opt = make_optimizer(model, rl.optimizer, lr=rl.lr, muon_lr=rl.muon_lr, weight_decay=0.0)
    if (ckpt / "optimizer.pt").exists():
        opt.load_state_dict(torch.load(ckpt / "optimizer.pt", weights_only=False))
    if use_checkpointing(rl, model, rl.max_length, cuda):
        set_checkpointing(model, True)
    mode = rl.mode if rl.mode != "auto" else "native" if start else "constrained"
    curriculum = Curriculum(rl.retry_every, dict(state.set_aside))
    log(
        f"rl: {len(train_tasks)} training task(s), {len(held)} held-out, {rl.iterations} round(s) of "
        f"{rl.tasks_per_iteration} task(s) x {rl.samples_per_task} samples, {mode} mode, from "
        f"{start or 'the base model'} -> {out}"
    )
    eval_t = cfg.llm.roles.agent.temperature  # held-out tasks are played as the eval plays them
    if state.before is None and held:
        state.before = summarise(play(cfg, root, source, start_dir, held, rl.eval_samples, eval_t, "before", mode, log))
        log(f"rl: held-out before: {state.before}")
    serve = out / "serving"
    with round_server(cfg, root, serve, mode, log) as push:
        for i in range(state.iteration, rl.iterations):
            save_model(model, tok, serve)  # the weights this round plays
            push()  # vLLM: loaded into the running engine in place; llama.cpp: the round's run converts them
            model.config.use_cache = False
            tasks = curriculum.choose(train_tasks, i, rl.tasks_per_iteration, rl.seed)
            temperature = temperature_at(rl, i)
            played = play(cfg, root, source, serve, tasks, rl.samples_per_task, temperature, f"round{i}", mode, log)
            for t in tasks:
                curriculum.record(t.task_id, any(p.verifiable for p in played if p.task_id == t.task_id), i)
            items, rollouts = [], []
            for p, adv in advantages(played):
                enc = encode(tok, {"messages": sft_messages(p.traj), "tools": p.traj.tools}, rl.max_length)
                if enc is not None:
                    items.append((enc, adv))
                    rollouts.append(engine_logprobs(tok, enc, p.traj))
            stats = update(model, opt, items, rl, device, rollouts)
            round_ = {
                "round": i,
                "temperature": temperature,
                "tasks": len(tasks),
                **summarise(played),
                **stats,
                "set_aside": len(curriculum.set_aside),
            }
            state.rounds.append(round_)
            state.iteration, state.set_aside = i + 1, dict(curriculum.set_aside)
            _save_checkpoint(out, model, tok, opt, state)
            log(f"rl: round {i}: {round_}")
    set_checkpointing(model, False)
    final = save_model(model, tok, out / "model")
    after = summarise(play(cfg, root, source, final, held, rl.eval_samples, eval_t, "after", mode, log)) if held else {}
    result = RLResult(out, start or "base", state.rounds, state.before or {}, after, round(time.monotonic() - t0, 1))
    record.write_text(
        json.dumps(
            {**asdict(result), "out": str(out), "source_run": source_run, "config": rl.model_dump(mode="json")},
            indent=1,
        )
    )
    write_rl_report(result, out / "rl.html")
    return result


def write_rl_report(result: RLResult, path: Path) -> Path:
    """The rounds' mean reward and the held-out reward before and after, as a page with two plots."""
    import html

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from worldsmith.plots import svg

    fig, ax = plt.subplots(figsize=(5.2, 3.0))
    rounds = [r["round"] for r in result.rounds]
    ax.plot(rounds, [r["reward"] or 0 for r in result.rounds], marker="o", label="mean reward")
    ax.plot(rounds, [r["verifiable"] or 0 for r in result.rounds], marker="s", label="verifiable")
    ax.set_xlabel("round")
    ax.set_title("training tasks, per round", loc="left", fontsize=11)
    ax.legend(fontsize=8)
    curve = svg(fig)
    fig, ax = plt.subplots(figsize=(5.2, 3.0))
    names = ["reward", "verifiable"]
    xs = range(len(names))
    ax.bar([x - 0.2 for x in xs], [result.before.get(n) or 0 for n in names], 0.4, label="before")
    ax.bar([x + 0.2 for x in xs], [result.after.get(n) or 0 for n in names], 0.4, label="after")
    ax.set_xticks(list(xs), names)
    ax.set_title("held-out tasks, before and after", loc="left", fontsize=11)
    ax.legend(fontsize=8)
    bars = svg(fig)
    rows = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(r.get(k)))}</td>" for k in ROUND_COLUMNS) + "</tr>"
        for r in result.rounds
    )
    head = "".join(f"<th>{k}</th>" for k in ROUND_COLUMNS)
    path.write_text(
        f"""<!doctype html><meta charset="utf-8"><title>worldsmith rl</title>
<style>body{{font-family:sans-serif;margin:2rem;max-width:70rem}}td,th{{padding:.2rem .6rem;text-align:right}}</style>
<h1>RL: {html.escape(str(result.out))}</h1>
<p>From {html.escape(result.start)}. Held-out before: {html.escape(json.dumps(result.before))}; after:
{html.escape(json.dumps(result.after))}.</p>
<table id="rounds"><tr>{head}</tr>{rows}</table>
<figure id="plot-rounds">{curve}</figure><figure id="plot-held-out">{bars}</figure>
"""
    )
    return path


ROUND_COLUMNS = (
    "round",
    "temperature",
    "tasks",
    "episodes",
    "reward",
    "verifiable",
    "passed",
    "loss",
    "masked_share",
    "engine_logprob_share",
    "set_aside",
)
