"""Spend budgets: accounting of every model call, limits per user, chat, agent, channel or
everyone, enforced across replicas; `/usage`, the usage API and the operator's reset."""
