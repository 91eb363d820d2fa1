"""Screens: the chat (main), and modal dialogs (confirm, help, resume)."""
