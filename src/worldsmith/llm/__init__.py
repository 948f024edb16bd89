"""LLM access: the async client, prompt templates and the model servers."""

from worldsmith.llm.client import LLMClient, LLMResult, UsageMeter
from worldsmith.llm.prompts import PromptError, Prompts

__all__ = ["LLMClient", "LLMResult", "PromptError", "Prompts", "UsageMeter"]
