"""The Textual front end. ``planshell.ui.app.run_app`` is the entry point."""
