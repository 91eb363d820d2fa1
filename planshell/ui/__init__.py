"""The Textual front end. ``planshell.ui.app.run_tui`` is the entry point."""
