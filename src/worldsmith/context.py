"""What every stage is handed: the config, the run's store, prompts, and a client factory."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from worldsmith.config import PipelineConfig, resolve_path
from worldsmith.llm import LLMClient, Prompts, UsageMeter
from worldsmith.store import RunStore


@dataclass
class RunContext:
    cfg: PipelineConfig
    root: Path  # project root: relative paths in the config are taken from here
    run_id: str
    store: RunStore
    prompts: Prompts
    embedded_url: str | None = None
    policy_url: str | None = None  # the agent policy's own server (llm.policy)
    usage: UsageMeter = field(default_factory=UsageMeter)
    usage_mark: dict = field(default_factory=dict)  # the usage snapshot when the last stage was recorded
    usage_before: dict = field(default_factory=dict)  # the run's usage in earlier invocations (a resumed run)

    @property
    def seed(self) -> int:
        return self.cfg.run.seed

    def path(self, value: str) -> Path:
        return resolve_path(self.root, value)

    def run_usage(self) -> dict:
        """The run's model usage over all its invocations (what run.json's `usage` holds): it once
        held only the last invocation's, so a run resumed for judge, export and report reported 0
        generated tokens."""
        total = UsageMeter()
        total.absorb(self.usage_before)
        total.absorb(self.usage.snapshot())
        return total.snapshot()

    def client(self) -> LLMClient:
        """A client for one event loop (stages run their own asyncio loop)."""
        return LLMClient(self.cfg.llm, embedded_url=self.embedded_url, usage=self.usage, policy_url=self.policy_url)
