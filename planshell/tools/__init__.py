"""Tools the agent can call: a base with declared effects, a registry, built-ins."""
