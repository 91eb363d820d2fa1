"""MCP servers as tools (issue 27): the SDK's client, adapted to planshell's Tool contract.

config models live in planshell.config.mcp; ``client`` runs the servers;
``tools`` turns each server tool into an ``mcp__<server>__<tool>`` Tool and
offers ``mcp_search`` when their schemas would not fit the budget.
"""
