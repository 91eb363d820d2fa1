"""Browser review of a plan: a loopback page with anchored comments (engine side, no Textual).

``render`` turns plan markdown into blocks with source line ranges, ``feedback``
writes comments back into the plan as ``> [!REVIEW]`` lines, and ``server`` is
the token-guarded HTTP server on 127.0.0.1 the page talks to.
"""
