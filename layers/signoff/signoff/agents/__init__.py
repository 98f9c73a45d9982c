"""Agents: ``agents/<name>/`` folders loaded into validated, ready-to-run definitions."""

from signoff.agents.agent import Agent
from signoff.agents.config import AgentConfig
from signoff.agents.loader import AgentCatalog, load_agent

__all__ = ["Agent", "AgentCatalog", "AgentConfig", "load_agent"]
